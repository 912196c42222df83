"""`nkw ask --questions FILE`: many questions with one load, plain lines or JSON lines, and the
file's mistakes as one clear line."""

from __future__ import annotations

import json

from flows.cli.main import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_questions_file_answers_each_line_once_loaded(capsys, tmp_path, sample_workspace):
    questions = tmp_path / "q.txt"
    questions.write_text(
        "# a comment\nWho hides the brass key in the van?\n\n"
        + json.dumps(
            {
                "question": "What did the fisherman catch?",
                "doc_id": "the_fisherman_and_his_wife",
                "options": ["A golden ring", "A talking flounder"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    ws = str(sample_workspace.root)
    code, out, _ = run(
        capsys,
        "ask",
        "-w",
        ws,
        "--embeddings",
        "hashing",
        "--doc",
        "the_lighthouse_key",
        "--questions",
        str(questions),
        "--json",
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [a["doc_id"] for a in lines] == ["the_lighthouse_key", "the_fisherman_and_his_wife"]
    assert lines[1]["answer"] in ("A golden ring", "A talking flounder") and lines[0]["is_offline"]
    code, out, _ = run(
        capsys,
        "ask",
        "-w",
        ws,
        "--embeddings",
        "hashing",
        "--doc",
        "the_lighthouse_key",
        "--questions",
        str(questions),
    )
    assert (
        code == 0
        and "Q1: Who hides the brass key in the van?" in out
        and "Q2: What did the fisherman catch?" in out
    )


def test_ask_questions_file_errors_are_one_line(capsys, tmp_path, sample_workspace):
    ws = str(sample_workspace.root)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Who?"}\n{"question": \n', encoding="utf-8")
    code, _, err = run(capsys, "ask", "-w", ws, "--doc", "the_lighthouse_key", "--questions", str(bad))
    assert code == 2 and "line 2" in err and "Traceback" not in err
    code, _, err = run(
        capsys, "ask", "-w", ws, "--doc", "the_lighthouse_key", "--questions", str(tmp_path / "none.txt")
    )
    assert code == 2 and "cannot read" in err
    code, _, err = run(capsys, "ask", "-w", ws, "--doc", "the_lighthouse_key")
    assert code == 2 and "--questions" in err
    code, _, err = run(
        capsys, "ask", "-w", ws, "--doc", "the_lighthouse_key", "Who?", "--questions", str(bad)
    )
    assert code == 2 and "one QUESTION" in err
    options = tmp_path / "opts.jsonl"
    options.write_text('{"question": "Who?", "options": ["one"]}\n', encoding="utf-8")
    code, _, err = run(capsys, "ask", "-w", ws, "--doc", "the_lighthouse_key", "--questions", str(options))
    assert code == 2 and "at least two" in err


def test_serve_refuses_bad_settings(capsys, sample_workspace, tmp_path):
    code, _, err = run(capsys, "serve", "-w", str(sample_workspace.root), "--concurrency", "0")
    assert code == 2 and "--concurrency" in err
    code, _, err = run(capsys, "serve", "-w", str(tmp_path / "nope"))
    assert code == 2 and "no workspace" in err
