"""Files written inside ``synced_at_end`` are made durable when the block ends, each once, with their folders."""

import os

import pytest

from babeleval.core import jsonl


@pytest.fixture
def fsynced(monkeypatch):
    """The paths fsync was called on, in order (an open file's path read back from /proc)."""
    seen = []
    real = os.fsync

    def record(fd):
        seen.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(jsonl.os, "fsync", record)
    return seen


def test_each_file_is_synced_as_it_is_written_outside_the_block(tmp_path, fsynced):
    jsonl.write_jsonl(tmp_path / "a.jsonl", [{"x": 1}])
    assert len(fsynced) == 1  # the temporary file, before its rename


def test_inside_the_block_files_are_synced_at_its_end(tmp_path, fsynced):
    with jsonl.synced_at_end():
        jsonl.write_jsonl(tmp_path / "a" / "one.jsonl", [{"x": 1}])
        jsonl.write_json(tmp_path / "a" / "two.json", {"y": 2})
        jsonl.write_jsonl(tmp_path / "a" / "one.jsonl", [{"x": 3}])  # written twice, synced once
        assert fsynced == []
    assert fsynced == [str(tmp_path / "a" / "one.jsonl"), str(tmp_path / "a" / "two.json"), str(tmp_path / "a")]
    assert jsonl.read_jsonl(tmp_path / "a" / "one.jsonl") == [{"x": 3}]


def test_a_failed_block_syncs_nothing_and_later_writes_sync_again(tmp_path, fsynced):
    with pytest.raises(RuntimeError):
        with jsonl.synced_at_end():
            jsonl.write_jsonl(tmp_path / "a.jsonl", [{"x": 1}])
            raise RuntimeError("the job failed")
    assert fsynced == []  # the job is failed and rerun: nothing of it needs to be durable
    jsonl.write_jsonl(tmp_path / "b.jsonl", [{"x": 1}])
    assert len(fsynced) == 1
