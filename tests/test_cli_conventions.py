"""The command line's conventions (ruff's where they fit): selectors validated, configuration
errors with a line, content sniffing, release precedence, --output-format, --statistics,
--show-settings/--show-files, excludes, colour, --version, rule --all, completion, and a warning
when nothing was linted."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mgpu_lint.cli import LINT_OPTIONS, main
from mgpu_lint.config import find_for_directory
from mgpu_lint.discover import kind_by_content

BAD_SH = "#!/bin/sh\nvllm serve 'unterminated --port 1\n"
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"
       "    image: {image}\n    command: [vllm, serve, Qwen/Qwen3-8B, {flag}]\n")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    find_for_directory.cache_clear()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": io.BytesIO(text.encode())})())


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- selectors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--select", "MG999", "unknown rule selector 'MG999'; did you mean MG"),
    ("--select", "bogus", "unknown rule selector 'bogus'"),
    ("--ignore", "MG3,MG0019", "unknown rule selector 'MG0019'"),
    ("--extend-select", "XX1", "unknown rule selector 'XX1'"),
    ("--select", ",", "no rule code given"),  # would otherwise select nothing, silently
])
def test_unknown_selector_is_usage_error(tmp_path: Path, capsys, flag: str, value: str,
                                         needle: str) -> None:
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, err = run(capsys, flag, value, str(tmp_path / "a.sh"))
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert needle in line and f"Invalid value for '{flag}'" in line


def test_known_prefixes_are_accepted(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, _ = run(capsys, "--select", "mg0,MG3", "--ignore", "MG00", str(tmp_path / "a.sh"))
    assert code == 0 and "MG003" not in out
    code, out, _ = run(capsys, "--select", "MG", str(tmp_path / "a.sh"))
    assert code == 1 and "MG003" in out


@pytest.mark.parametrize(("content", "needle"), [
    ('select = ["MG999"]\n', ":1: key `select`: unknown rule selector 'MG999'"),
    ('gpu = "H100 SXM"\n\n[per-file-ignores]\n"legacy/*" = ["MG0", "MG77"]\n',
     ":3: key `per-file-ignores`: 'legacy/*': unknown rule selector 'MG77'"),
    ('fail-on = "error"\nextend-select = ["nope"]\n', ":2: key `extend-select`"),
])
def test_unknown_selector_in_config(tmp_path: Path, capsys, content: str, needle: str) -> None:
    (tmp_path / "mgpu-lint.toml").write_text(content)
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, _, err = run(capsys, str(tmp_path / "a.sh"))
    assert code == 2
    assert str(tmp_path / "mgpu-lint.toml") + needle in one_error_line(err)


# -- configuration that does not parse ----------------------------------------------------------

def test_broken_pyproject_is_an_error_with_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mgpu-lint]\n'
                                             'select = ["MG1"\n')
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, err = run(capsys, str(tmp_path / "a.sh"))
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert f"{tmp_path / 'pyproject.toml'}:5:" in line and "not valid TOML" in line


def test_broken_pyproject_without_our_table_is_ignored(tmp_path: Path, capsys) -> None:
    # another tool's broken file that never names mgpu-lint is not ours to judge
    (tmp_path / "pyproject.toml").write_text("[project\n")
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, _ = run(capsys, str(tmp_path / "a.sh"))
    assert code == 1 and "MG003" in out


def test_unknown_key_in_pyproject_table_has_its_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.other]\nselect = 1\n\n[tool.mgpu-lint]\n'
                                             'ignore = ["MG703"]\nslect = ["MG1"]\n')
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, _, err = run(capsys, str(tmp_path / "a.sh"))
    assert code == 2
    assert f"{tmp_path / 'pyproject.toml'}:6: key `slect`: unknown key" in one_error_line(err)


# -- numeric options ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-3", "many", "2000"])
def test_gpus_per_node_validated(tmp_path: Path, capsys, value: str) -> None:
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, err = run(capsys, "--gpus-per-node", value, str(tmp_path / "a.sh"))
    assert code == 2 and out == ""
    assert "Invalid value for '--gpus-per-node'" in one_error_line(err)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--format"], "Option '--format' requires an argument."),
    (["--exit-zero=yes", "x"], "Option '--exit-zero' does not take a value."),
    (["--output-format", "xml", "x"], "'xml' is not one of 'text', 'json', 'sarif', 'github'"),
    (["--color", "sometimes", "x"], "Invalid value for '--color'"),
    (["--formt", "json", "x"], "No such option: --formt Did you mean --format?"),
    (["--target-version", "banana", "x"], "Invalid value for '--target-version'"),
    (["--statistics", "--output-format", "sarif", "x"], "--statistics"),
])
def test_option_errors_read_like_click(capsys, argv: list[str], needle: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    line = one_error_line(err)
    assert needle in line and line.startswith("mgpu-lint: error: ")


def test_check_names_itself_in_errors(capsys) -> None:
    code, _, err = run(capsys, "check", "--bogus")
    assert code == 2
    assert one_error_line(err).startswith("mgpu-lint check: error: No such option: --bogus")


# -- content sniffing ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind"), [
    ("#!/usr/bin/env bash\nvllm serve m\n", "shell"),
    ("---\n# Source: chart/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\n",
     "yaml"),
    ("# compose\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n", "yaml"),
    ('{"apiVersion": "v1", "kind": "Pod"}', "yaml"),
    ("# syntax=docker/dockerfile:1\nARG TAG=v0.30.0\nFROM vllm/vllm-openai:${TAG} AS base\n",
     "dockerfile"),
    ("#!/usr/bin/env python\nfrom os import path\n", None),
    ("name: x\nitems: []\n---\napiVersion: v1\n", None),  # only the first document counts
    ("hello world\n", None),
])
def test_kind_by_content(text: str, kind: str | None) -> None:
    assert kind_by_content(text) == kind


def test_stdin_is_sniffed(capsys, monkeypatch) -> None:
    feed_stdin(monkeypatch, POD.format(image="vllm/vllm-openai:v0.30.0",
                                       flag="--tensor-paralel-size"))
    code, out, _ = run(capsys, "--output-format", "json", "-")
    doc = json.loads(out)
    assert code == 1
    assert any(f["code"] == "MG004" and f["path"] == "<stdin>" for f in doc["findings"])
    assert doc["summary"]["launches"] == 1


def test_stdin_filename_wins_over_content(capsys, monkeypatch) -> None:
    # YAML-looking text named as a shell script is read as shell: `apiVersion:` is a command
    feed_stdin(monkeypatch, "apiVersion: v1\nvllm serve 'x\n")
    code, out, _ = run(capsys, "-", "--stdin-filename", "run.sh")
    assert "run.sh:2:12: MG003" in out


def test_suffixless_files_are_sniffed_when_walked(tmp_path: Path, capsys) -> None:
    (tmp_path / "rendered").write_text(POD.format(image="vllm/vllm-openai:v0.30.0",
                                                  flag="--tensor-paralel-size"))
    (tmp_path / "Buildfile").write_text("FROM vllm/vllm-openai:v0.30.0\n"
                                        'ENTRYPOINT ["vllm", "serve", "m", "--prot", "1"]\n')
    (tmp_path / "LICENSE").write_text("Apache License\n")
    (tmp_path / "notes.txt").write_text("apiVersion: v1\n")  # a suffix that is not ours: skipped
    code, out, _ = run(capsys, "--select", "MG004", str(tmp_path))
    assert f"{tmp_path / 'rendered'}:9:" in out and "MG004" in out
    assert f"{tmp_path / 'Buildfile'}:2:" in out
    assert "in 2 file(s), 2 launch(es)" in out
    assert code == 1


# -- precedence: a pin in the file > target-version > the default --------------------------------

# `--async-scheduling` is an option of vLLM 0.30.0 that 0.8.5 does not have (the flag catalogs
# vllm-0.30.0.json and vllm-0.8.5.post1.json, dumped from vllm/engine/arg_utils.py)
def test_image_tag_beats_target_version(tmp_path: Path, capsys) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(POD.format(image="vllm/vllm-openai:v0.8.5", flag="--async-scheduling"))
    code, out, _ = run(capsys, "--select", "MG004", "--target-version", "vllm==0.30.0", str(p))
    assert "MG004" in out and "--async-scheduling" in out
    code, out, _ = run(capsys, "launches", "--target-version", "0.30.0", str(p))
    assert "flags: vllm 0.8.5.post1 catalog (pinned 0.8.5 in the file)" in out


def test_target_version_beats_the_default(tmp_path: Path, capsys) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(POD.format(image="example.com/own-image:1", flag="--async-scheduling"))
    code, out, _ = run(capsys, "--select", "MG004", str(p))
    assert code == 0 and "MG004" not in out  # the default, 0.30.0, has the option
    (tmp_path / "mgpu-lint.toml").write_text('target-version = "vllm==0.8.5"\n')
    code, out, _ = run(capsys, "--select", "MG004", str(p))
    assert code == 1 and "--async-scheduling" in out
    os.chdir(tmp_path)
    try:
        code, out, _ = run(capsys, "launches", str(p))
    finally:
        os.chdir(Path(__file__).resolve().parents[1])
    assert "(target-version 0.8.5; the file pins none)" in out
    code, out, _ = run(capsys, "launches", "--target-version", "0.30.0", str(p))
    assert "flags: vllm 0.30.0 catalog (target-version 0.30.0; the file pins none)" in out


def test_a_tag_that_names_no_release_gives_way_to_target_version(tmp_path: Path,
                                                                 capsys) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(POD.format(image="vllm/vllm-openai:nightly", flag="--async-scheduling"))
    code, out, _ = run(capsys, "launches", "--target-version", "0.8.5", str(p))
    assert "(target-version 0.8.5; the file's nightly names no release)" in out
    code, out, _ = run(capsys, "launches", str(p))
    assert "(pinned nightly in the file)" in out


# -- ruff's conventions -------------------------------------------------------------------------

def test_version(capsys) -> None:
    from mgpu_lint import __version__

    for flag in ("-V", "--version"):
        code, out, _ = run(capsys, flag)
        assert code == 0 and out == f"mgpu-lint {__version__}\n"


def test_format_is_an_alias_of_output_format(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.sh").write_text(BAD_SH)
    outputs = [run(capsys, flag, "json", str(tmp_path / "a.sh"))[1]
               for flag in ("--format", "--output-format")]
    assert outputs[0] == outputs[1] and json.loads(outputs[0])["findings"]


def test_statistics_is_only_the_table(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.sh").write_text(BAD_SH)
    (tmp_path / "b.sh").write_text(BAD_SH)
    code, out, _ = run(capsys, "--statistics", str(tmp_path))
    assert code == 1
    assert out.splitlines() == ["MG003  shell-syntax  2"]
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", str(tmp_path))
    assert json.loads(out) == [{"code": "MG003", "name": "shell-syntax", "count": 2}]


def test_show_settings(tmp_path: Path, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mgpu-lint]\nignore = ["MG703"]\n'
                                             "gpus-per-node = 4\nextend-exclude = ['old']\n")
    (tmp_path / "a.sh").write_text(BAD_SH)
    code, out, _ = run(capsys, "--show-settings", "--ignore", "MG702", "--gpu", "L4",
                       str(tmp_path / "a.sh"))
    assert code == 0
    assert f"# configuration file: {tmp_path / 'pyproject.toml'}" in out
    assert 'ignore = ["MG703", "MG702"]' in out
    assert "gpus-per-node = 4" in out and 'gpu = "L4"' in out
    assert 'extend-exclude = ["old"]' in out
    code, out, _ = run(capsys, "--show-settings", "--config", str(tmp_path / "pyproject.toml"))
    assert code == 0 and "gpus-per-node = 4" in out


def test_show_files_excludes_and_gitignore(tmp_path: Path, capsys) -> None:
    for name in ("a.sh", "old/b.sh", "gen/c.yaml", "vendor/d.md", "keep/e.sh"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(BAD_SH)
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "mgpu-lint.toml").write_text('extend-exclude = ["vendor"]\n')
    os.chdir(tmp_path)
    try:
        code, out, _ = run(capsys, "--show-files", ".")
        assert code == 0
        assert sorted(out.split()) == ["./a.sh", "./keep/e.sh", "./old/b.sh"]
        code, out, _ = run(capsys, "--show-files", "--extend-exclude", "old/,*.md", ".")
        assert sorted(out.split()) == ["./a.sh", "./keep/e.sh"]
        # --exclude replaces `exclude` (the defaults); the configuration's extend-exclude stays
        code, out, _ = run(capsys, "--show-files", "--exclude", "keep", ".")
        assert sorted(out.split()) == ["./a.sh", "./old/b.sh"]
        # a file named on the command line is linted unless --force-exclude
        code, out, _ = run(capsys, "--show-files", "vendor/d.md")
        assert out.split() == ["vendor/d.md"]
        code, out, err = run(capsys, "--show-files", "--force-exclude", "vendor/d.md")
        assert out == "" and "warning" in err
        code, out, err = run(capsys, "--force-exclude", "vendor/d.md")
        assert code == 0 and "no files were linted" in err
    finally:
        os.chdir(Path(__file__).resolve().parents[1])


def test_nothing_linted_warns_and_exits_0(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n")
    code, out, err = run(capsys, str(tmp_path))
    assert code == 0
    assert one_error_line(err).startswith("mgpu-lint: warning: no files were linted")
    assert "in 0 file(s)" in out


@pytest.mark.parametrize(("argv", "env", "colored"), [
    (["--color", "always"], {}, True),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"NO_COLOR": "1"}, False),
    ([], {}, False),  # captured output is no terminal
    (["--no-color"], {"FORCE_COLOR": "1"}, False),
])
def test_color(tmp_path: Path, capsys, monkeypatch, argv: list[str], env: dict[str, str],
               colored: bool) -> None:
    for var in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    (tmp_path / "a.sh").write_text(BAD_SH)
    _, out, _ = run(capsys, *argv, str(tmp_path / "a.sh"))
    assert ("\x1b[" in out) is colored


def test_rule_all_and_json(capsys) -> None:
    from mgpu_lint.rules import ALL

    code, out, _ = run(capsys, "rule", "--all")
    assert code == 0 and all(f"{r.code} {r.name} (" in out for r in ALL)
    code, out, _ = run(capsys, "rule", "mg101", "--output-format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["code"] == "MG101" and doc["explanation"]
    code, out, _ = run(capsys, "rule", "--all", "--format", "json")
    assert [d["code"] for d in json.loads(out)] == sorted(r.code for r in ALL)
    code, out, _ = run(capsys, "rules", "--output-format", "json")
    assert len(json.loads(out)) == len(ALL)


def test_rules_json_links_follow_the_configured_docs_url(capsys, tmp_path, monkeypatch) -> None:
    """`rules`/`rule` JSON give each rule's page as the lint report's JSON does: the
    configuration's docs-url (the one closest to the working directory, or --config), else
    the page shipped with the package."""
    from mgpu_lint.report.rule_pages import page_file

    monkeypatch.chdir(tmp_path)
    shipped = page_file("MG101")
    assert shipped is not None
    _, out, _ = run(capsys, "rules", "--output-format", "json")
    assert {d["code"]: d["url"] for d in json.loads(out)}["MG101"] == shipped.as_uri()
    (tmp_path / ".mgpu-lint.toml").write_text('docs-url = "https://docs.example.org/r/{code}"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # the closest configuration is the parent's
    _, out, _ = run(capsys, "rules", "--output-format", "json")
    urls = {d["code"]: d["url"] for d in json.loads(out)}
    assert urls["MG101"] == "https://docs.example.org/r/MG101"
    assert all(u == f"https://docs.example.org/r/{c}" for c, u in urls.items())
    _, out, _ = run(capsys, "rule", "MG004", "--output-format", "json")
    assert json.loads(out)["url"] == "https://docs.example.org/r/MG004"
    # lint JSON from the same directory links the same page
    (tmp_path / "sub" / "a.sh").write_text(BAD_SH)
    _, out, _ = run(capsys, "--output-format", "json", "a.sh")
    assert {f["url"] for f in json.loads(out)["findings"]} == {"https://docs.example.org/r/MG003"}
    other = tmp_path / "other.toml"
    other.write_text('docs-url = "https://other.example.org/mgpu"\n')
    _, out, _ = run(capsys, "rule", "--all", "--format", "json", "--config", str(other))
    assert json.loads(out)[0]["url"] == "https://other.example.org/mgpu/MG000.md"
    other.write_text('docs-url = "ftp://nowhere"\n')
    code, out, err = run(capsys, "rules", "--output-format", "json", "--config", str(other))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "docs-url" in err


def test_help_has_one_look(capsys) -> None:
    for argv in (["--help"], ["check", "-h"], ["plan", "--help"], ["rule", "-h"],
                 ["launches", "--help"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert out.startswith("Usage: mgpu-lint"), argv
        assert "\nOptions:\n" in out and "╭" not in out, argv
    _, out, _ = run(capsys, "check", "--help")
    assert out.startswith("Usage: mgpu-lint check [OPTIONS] [PATH]...\n")
    _, out, _ = run(capsys, "--help")
    assert out.startswith("Usage: mgpu-lint [check] [OPTIONS] [PATH]...\n")
    for opt in LINT_OPTIONS:
        assert opt.names[0] in out
    assert "\nCommands:\n" in out and "  plan " in out


def complete(words: str) -> list[str]:
    """What bash completion offers for the last of ``words`` (typer's protocol)."""
    parts = words.split(" ")
    env = {**os.environ, "_MGPU_LINT_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(parts) - 1)}
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_shell_completion_through_typer() -> None:
    assert complete("mgpu-lint pl") == ["plan"]
    # the lint command's options come from the same table as its parser
    assert complete("mgpu-lint check --sel") == ["--select"]
    assert complete("mgpu-lint check --output-format ") == ["text", "json", "sarif", "github"]
    assert complete("mgpu-lint check --fail-on w") == ["warning"]
    # `--show-completion` detects the shell from the process's ancestors (typer
    # _completion_shared._get_shell_name, shellingham): a run with no shell above it (a
    # background job whose shell has exited) printed "Shell  not supported." and exit 1.
    # typer's own switch for tests makes it take the shell as its value instead.
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    proc = subprocess.run([sys.executable, "-m", "mgpu_lint.cli", "--show-completion", "bash"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0 and "_MGPU_LINT_COMPLETE" in proc.stdout


def test_typer_check_is_the_same_command(tmp_path: Path, capsys) -> None:
    """The typer declaration of `check` (built from LINT_OPTIONS for completion) lints alike."""
    from mgpu_lint.cli import _typer_app

    (tmp_path / "a.sh").write_text(BAD_SH)
    argv = ["--output-format", "json", "--select", "MG003", "--fail-on", "error", str(tmp_path)]
    code = _typer_app()(["check", *argv], prog_name="mgpu-lint", standalone_mode=False)
    typer_out = capsys.readouterr().out
    assert (code, typer_out) == (main(["check", *argv]), capsys.readouterr().out)
    assert code == 1 and json.loads(typer_out)["findings"][0]["code"] == "MG003"
