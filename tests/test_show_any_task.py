"""``python -m babeleval show`` previews any task and template, in the grid or not: a task params.yaml leaves
commented out ("ready to add", docs/tasks.md) from that entry, another from its bundled sample."""

from __future__ import annotations

from pathlib import Path

from babeleval.cli import show

PARAMS = str(Path(__file__).resolve().parents[1] / "params.yaml")


def test_a_task_left_commented_out_is_shown_from_its_entry(capsys, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    assert show.main(["--params", PARAMS, "--task", "translation_from", "--language", "jpn_Jpan",
                      "--template", "en_zeroshot"]) == 0
    out = capsys.readouterr().out
    # its entry's partner (eng_Latn) and split (dev) are used: Japanese source, English target
    assert "Translate the following text to the English language" in out and "===== item 1: " in out


def test_every_task_params_yaml_keeps_ready_to_add_can_be_previewed(capsys, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    for task, language, template in [("sib200", "eng_Latn", "en_zeroshot"), ("arc", "swh_Latn", "en_zeroshot"),
                                     ("truthfulqa", "eng_Latn", "en_zeroshot"), ("marc_ja", "jpn_Jpan", "0.2")]:
        assert show.main(["--params", PARAMS, "--task", task, "--language", language, "--template", template]) == 0, task
        assert capsys.readouterr().out.startswith("===== item 1: "), task


def test_an_unknown_task_is_named(capsys, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    assert show.main(["--params", PARAMS, "--task", "belebelle", "--language", "eng_Latn", "--template", "paper"]) == 2
    assert "unknown task 'belebelle' (known: " in capsys.readouterr().err  # and the closest: belebele


def test_commented_entry_reads_only_that_block():
    text = "tasks:\n  belebele: {}\n  # sib200:\n  #   languages: [eng_Latn]\n  #   source: {kind: local, path: x}\n" \
           "  # arc:                       # uhura\n  #   languages: [swh_Latn]\n"
    assert show.commented_entry(text, "sib200") == {"languages": ["eng_Latn"], "source": {"kind": "local", "path": "x"}}
    assert show.commented_entry(text, "arc") == {"languages": ["swh_Latn"]}
    assert show.commented_entry(text, "mgsm") is None
