"""The per-item outcome table (babeleval.score.outcomes): what analysis reads reads back as scoring wrote it,
without the prompt, and only the columns a step asks for."""

import pyarrow.parquet as pq

from babeleval.analysis.records import CORRECTNESS, load_outcomes
from babeleval.core.paths import Combo
from babeleval.score import outcomes


def scored(**extra):
    return {"id": "q1", "language": "fra_Latn", "prompt": "P: a long passage\nAnswer:", "choices": ["a", "b", "c"],
            "exemplar_ids": ["e1"], "settings": {"temperature": 0}, "parsed": True, "parse_error": None,
            "prediction": 1, "answer": 1, "gold": "B", "correct": True, **extra}


def test_a_table_holds_what_analysis_reads_and_no_prompt(tmp_path):
    path = tmp_path / "results/outcomes/m/belebele/fra_Latn/instruct.parquet"
    long = "x" * 2000
    outcomes.write(path, [scored(response=long), scored(id="q2", response="B", correct=False, parsed=False,
                                                         parse_error="no answer", prediction=None)])
    assert set(pq.read_schema(path).names) == {"id", "language", "parsed", "parse_error", "prediction", "answer",
                                               "gold", "correct", "response", "n_choices"}
    first, second = outcomes.read(path)
    assert first["response"] == long[:outcomes.RESPONSE_CHARS] + "..." and first["n_choices"] == 3
    assert second == {**outcomes.slim(scored(id="q2", response="B", correct=False, parsed=False,
                                             parse_error="no answer", prediction=None)), "n_choices": 3}
    assert outcomes.read(path, ["id", "correct", "not_there"]) == [{"id": "q1", "correct": True},
                                                                 {"id": "q2", "correct": False}]
    assert "response" not in outcomes.read(path, without=outcomes.TEXT_ONLY)[0]


def test_values_of_mixed_types_read_back_as_written(tmp_path):
    """A list of references, an id that is sometimes a number, a lone surrogate from a model's broken text."""
    path = tmp_path / "t.parquet"
    records = [scored(id=7, answer=["Paris", "paris"], response="\ud800 broken", f1=0.5),
               scored(id="q2", answer="Lyon", response="fine", f1=1)]
    outcomes.write(path, records)
    back = outcomes.read(path)
    assert [r["id"] for r in back] == [7, "q2"]
    assert [r["answer"] for r in back] == [["Paris", "paris"], "Lyon"]
    assert back[0]["response"] == "\ud800 broken"
    assert [r["f1"] for r in back] == [0.5, 1] and isinstance(back[1]["f1"], int)


def test_load_outcomes_reads_a_combination_when_looked_up(tmp_path):
    files = []
    for language in ("eng_Latn", "fra_Latn"):
        path = tmp_path / f"results/outcomes/m/belebele/{language}/0.2.parquet"
        outcomes.write(path, [scored()])
        files.append(path)
    tables = load_outcomes(files, CORRECTNESS)
    assert list(tables) == [Combo("m", "belebele", "eng_Latn", "0.2"), Combo("m", "belebele", "fra_Latn", "0.2")]
    files[1].unlink()  # nothing read yet: only the first is looked up
    assert tables[Combo("m", "belebele", "eng_Latn", "0.2")] == [{"id": "q1", "correct": True}]
