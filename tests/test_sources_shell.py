"""Shell semantics as a POSIX shell applies them (linter/shell.py, linter/sources/commandline.py):
parameter expansion, field splitting, commands in variables and arrays, wrappers."""

from __future__ import annotations

import json

import pytest
from mgpu_lint.cli import main


def _launches(capsys: pytest.CaptureFixture[str], tmp_path, script: str) -> list[dict]:
    path = tmp_path / "run.sh"
    path.write_text(script)
    assert main(["launches", "--format", "json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)["launches"]


def _lint(capsys: pytest.CaptureFixture[str], tmp_path, script: str) -> str:
    path = tmp_path / "run.sh"
    path.write_text(script)
    main(["--no-color", "--exit-zero", str(path)])
    return capsys.readouterr().out


def _argv(la: dict) -> list[str]:
    return [w["word"] for w in la["argv"]]


MODEL = "Qwen/Qwen2.5-7B-Instruct"


def test_known_unquoted_value_is_split_into_words_where_they_are_written(capsys, tmp_path):
    (la,) = _launches(capsys, tmp_path, f'P="-tp 2 --max-model-len 8192"\nvllm serve {MODEL} $P\n')
    assert _argv(la) == [MODEL, "-tp", "2", "--max-model-len", "8192"]
    assert [w["at"] for w in la["argv"][1:3]] == ["1:4", "1:8"]


def test_quoted_value_stays_one_word(capsys, tmp_path):
    out = _lint(capsys, tmp_path, f'P="-tp 2"\nvllm serve {MODEL} "$P"\n')
    assert "MG014" in out  # the flag and its value reach vLLM as one word


def test_assignment_values_are_not_split(capsys, tmp_path):
    (la,) = _launches(capsys, tmp_path,
                      f'A="--port 8001"\nB=$A\nexport C=$B\nvllm serve {MODEL} $C\n')
    assert _argv(la) == [MODEL, "--port", "8001"]


@pytest.mark.parametrize("words", ["$EXTRA", "${EXTRA}", "${EXTRA-}", "${EXTRA:+--enable-lora}",
                                   "$(cat flags.txt)", '"$@"', "$*", "${ARGS[@]}"])
def test_unknown_words_are_never_the_model_nor_an_unexpected_argument(capsys, tmp_path, words):
    out = _lint(capsys, tmp_path, f"vllm serve {words} --model {MODEL} --port 8000\n"
                                  f"vllm serve {MODEL} {words} --port 8000\n")
    assert "MG016" not in out and "MG004" not in out and "MG014" not in out, out


def test_unknown_words_only_no_default_model_claim(capsys, tmp_path):
    out = _lint(capsys, tmp_path, "vllm serve $ARGS\n")
    assert "MG016" not in out and "default model" not in out, out


def test_alternative_with_value_set(capsys, tmp_path):
    (la,) = _launches(capsys, tmp_path,
                      f"L=1\nE=\nvllm serve {MODEL} ${{L:+--enable-lora --max-loras 2}}"
                      f" ${{E:+--x}} ${{U:-}}\n")
    # ${E:+--x} with E empty is no word; ${U:-} with U unknown stays an unknown-words marker
    assert _argv(la) == [MODEL, "--enable-lora", "--max-loras", "2", "${U:-}"]
    assert la["argv"][1]["at"] == "3:42"  # the words of ${L:+…} where they are written


def test_default_used_for_unknown_variable(capsys, tmp_path):
    (la,) = _launches(capsys, tmp_path, f"vllm serve {MODEL} --tensor-parallel-size ${{TP:-2}}\n")
    assert la["argv"][-1] == {"word": "2", "at": "1:66"}


def test_command_in_variable_and_array(capsys, tmp_path):
    script = (f'CMD="vllm serve {MODEL} --port 8006"\n$CMD\n'
              "args=(\n  --tensor-parallel-size 2  # comment\n  --port 8007\n)\n"
              "args+=(--max-num-seqs 64)\n"
              f'vllm serve {MODEL} "${{args[@]}}"\n')
    a, b = _launches(capsys, tmp_path, script)
    assert a["at"] == "1:6" and _argv(a) == [MODEL, "--port", "8006"]
    assert _argv(b) == [MODEL, "--tensor-parallel-size", "2", "--port", "8007",
                        "--max-num-seqs", "64"]
    assert b["argv"][1]["at"] == "4:3"


@pytest.mark.parametrize("line", [
    f"nohup setsid vllm serve {MODEL} > log 2>&1 &",
    f"timeout 600 bash -lc -- 'vllm serve {MODEL}'",
    f"timeout -s INT 10m sh -c 'exec vllm serve {MODEL}'",
    f"conda run -n serving --no-capture-output vllm serve {MODEL}",
    f"micromamba run -p /opt/env vllm serve {MODEL}",
    f'eval "exec vllm serve {MODEL}"',
    f"eval vllm serve {MODEL}",
    f"exec -a vllm-main vllm serve {MODEL}",
    f"uv run --with vllm vllm serve {MODEL}",
])
def test_wrappers(capsys, tmp_path, line):
    (la,) = _launches(capsys, tmp_path, line + "\n")
    assert _argv(la) == [MODEL]


def test_bash_c_needs_c(capsys, tmp_path):
    assert _launches(capsys, tmp_path, "bash -l -- run.sh vllm serve x\n") == []


def test_eval_joins_its_words_and_reads_them_again(capsys, tmp_path):
    # POSIX eval: the arguments joined with spaces are parsed and expanded a second time, so
    # the single-quoted "$M" expands on the second reading and $FLAGS' words split again
    script = (f"M={MODEL}\n"
              'FLAGS="--tensor-parallel-size 2 --port 8001"\n'
              """eval vllm serve '"$M"' $FLAGS\n"""
              """eval exec vllm serve "$M" '--max-model-len 4096'\n""")
    a, b = _launches(capsys, tmp_path, script)
    assert _argv(a) == [MODEL, "--tensor-parallel-size", "2", "--port", "8001"]
    assert a["argv"][0]["at"] == "3:19" and a["argv"][1]["at"] == "2:8"
    assert _argv(b) == [MODEL, "--max-model-len", "4096"]
    assert b["argv"][1]["at"] == "4:28" and b["argv"][2]["at"] == "4:44"


def test_eval_keeps_unknown_words_unknown(capsys, tmp_path):
    # `"$X"` unknown: quoted it is one word, the model (MG009 says it is unresolved); on eval's
    # second reading it is unquoted, so it may be no word or several: no positional model
    direct = _lint(capsys, tmp_path, 'vllm serve "$X" --tensor-parallel-size 3\n')
    assert "MG009" in direct and "--model is set from $X" in direct
    out = _lint(capsys, tmp_path, 'eval vllm serve "$X" --tensor-parallel-size 3\n')
    assert "MG009" not in out and "MG004" not in out and "MG016" not in out


def test_eval_of_an_unrendered_template_is_not_read(capsys, tmp_path):
    # an operator's Go template around eval (KServe LLMInferenceServiceConfig): the command
    # exists only after rendering, so neither the joined words nor one string are read
    several = ('eval "exec vllm serve /mnt/models --served-model-name "{{ .Spec.Model.Name }}" '
               '{{- if .Spec.P }} --tensor-parallel-size {{ .Spec.P }}{{- end }}"\n')
    one = 'eval "exec vllm serve /mnt/models {{ if .T }}--tensor-parallel-size {{ .T }}{{ end }}"\n'
    assert _launches(capsys, tmp_path, several) == []
    assert _launches(capsys, tmp_path, one) == []


def test_angle_bracket_placeholder_is_an_unset_value(capsys, tmp_path):
    # documentation writes `<MASTER_NODE_IP>` for a value to fill in: one word nobody set, not
    # an input redirection plus an output redirection eating the next word (`--host`), so the
    # flag before it keeps its value and no MG005 "needs a value" is reported
    script = ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
              "--tp 2 --nnodes 2 --node-rank 0 --dist-init-addr <MASTER_NODE_IP>\n"
              f"vllm serve {MODEL} --host <HOST_IP> --port 8000 \\\n"
              "  --api-key http://<KEY>:1/x\n")
    sgl, vllm = _launches(capsys, tmp_path, script)
    assert _argv(sgl)[-2:] == ["--dist-init-addr", "<MASTER_NODE_IP>"]
    assert _argv(vllm) == [MODEL, "--host", "<HOST_IP>", "--port", "8000", "--api-key",
                           "http://<KEY>:1/x"]
    assert "MG005" not in _lint(capsys, tmp_path, script)


def test_real_redirections_stay_redirections(capsys, tmp_path):
    # `<in.txt >out.log` and `<in>out` are what the shell reads: redirections, not words
    (la,) = _launches(capsys, tmp_path, f"vllm serve {MODEL} -tp 2 <in.txt >out.log\n"
                                         f"cat <in>out\n")
    assert _argv(la) == [MODEL, "-tp", "2"]


@pytest.mark.parametrize("opener,delimiter", [("<<EOF", "EOF"), ("<<'EOF'", "EOF"),
                                              ("<<-EOF", "\tEOF"), ('<< "END"', "END")])
def test_a_quote_in_a_here_document_body_opens_nothing(capsys, tmp_path, opener, delimiter):
    """The body is text for cat, not shell: its apostrophe (`it's`) once opened a quote that
    ran to the next `'` of the script and swallowed the launch after the body."""
    script = (f"cat {opener}\nit's the \"model\" `x` $(y\n{delimiter}\n"
              f"vllm serve {MODEL} -tp 2 --served-model-name 'x'\n")
    (la,) = _launches(capsys, tmp_path, script)
    assert _argv(la) == [MODEL, "-tp", "2", "--served-model-name", "x"]
    assert la["argv"][0]["at"] == "4:12"


def test_a_value_too_long_for_any_argument_is_unknown(capsys, tmp_path):
    """A value over bounds.MAX_VALUE_CHARS (128 KiB, Linux's MAX_ARG_STRLEN) is unknown where it
    is expanded: `x=$x$x` forty times made 2^41 characters of a 300-byte script (over 9 GiB)."""
    from mgpu_lint.bounds import MAX_VALUE_CHARS

    a = "a" * MAX_VALUE_CHARS
    (la,) = _launches(capsys, tmp_path, f'M={a}\nvllm serve "$M" -tp 2\n')
    assert _argv(la)[0] == a
    assert "--model is set from $M" not in _lint(capsys, tmp_path, f'M={a}\nvllm serve "$M"\n')
    out = _lint(capsys, tmp_path, f'M={a}b\nvllm serve "$M" -tp 2\n')
    assert "MG009" in out and "--model is set from $M" in out


def test_array_appends_and_reassignment(capsys, tmp_path):
    (la,) = _launches(capsys, tmp_path, f'a=(-tp)\na+=(2)\na+=(--port 8000)\n'
                      f'vllm serve {MODEL} "${{a[@]}}"\n')
    assert _argv(la) == [MODEL, "-tp", "2", "--port", "8000"]
    (la, lb) = _launches(capsys, tmp_path, f'a=(-tp)\na+=(2)\nvllm serve {MODEL} "${{a[@]}}"\n'
                         f'a=(-pp)\na+=(2)\nvllm serve {MODEL} "${{a[@]}}"\n')
    assert _argv(la) == [MODEL, "-tp", "2"] and _argv(lb) == [MODEL, "-pp", "2"]


def test_the_references_of_a_composed_word_are_those_of_the_outer_word_it_meets():
    """WordComposer finds the outer word's references that a word meets by bisection when they
    are in order; the reference is the filter of all of them (in order or not)."""
    import random

    from mgpu_lint.source import CharMap, Span, VarRef, Word
    from mgpu_lint.sources.commandline import WordComposer

    rng = random.Random(7)
    for trial in range(300):
        n = rng.choice([0, 3, 15, 16, 40])
        spans, at = [], 0
        for _ in range(n):
            at += rng.randint(0, 3)
            spans.append((at, at + rng.randint(0, 4)))
            at = spans[-1][1] if rng.random() < 0.8 else at
        if trial % 3 == 0:
            rng.shuffle(spans)  # not in order: the filter itself
        refs = tuple(VarRef(f"V{i}", Span(a, b)) for i, (a, b) in enumerate(spans))
        outer = Word("x" * (at + 10), CharMap.linear(0, at + 10), unresolved=refs)
        composer = WordComposer(outer)
        for _ in range(20):
            a = rng.randint(0, at + 5)
            b = a + rng.randint(1, 6)
            inner = Word("y" * (b - a), CharMap.linear(a, b - a))
            want = tuple(v for v in refs if v.span.start < b and a < v.span.end)
            assert composer(inner).unresolved == want, (spans, a, b)


def test_blank_and_comment_lines_are_skipped_as_the_lexer_reads_them():
    """After a command ends, split_commands skips whole blank and comment lines at once; the
    reference is the lexer reading each (the skip turned off).  Random scripts of commands,
    blank lines, comments, CRs, continuations, here-documents and arrays."""
    import random
    import re

    from mgpu_lint import shell

    pieces = ["vllm serve m -tp 2", "\n", "  \n", "# c\n", "\t# x y\n", "\r\n", "\n\n",
              "cat <<EOF\n", "EOF\n", "x \\\n", "y \\ \n", "a=( p\n", ")\n", "echo 'q\n",
              " #\n", "w #z\n", "\\\n", "<<-E\n", "\tE\n", "$(\n", "'\n", '"\n']

    def run(text: str) -> list:
        out = []
        for cmd in shell.split_commands(text):
            out.append((cmd.line_start, [(w.text, w.span) for w in cmd.words],
                        [(p.message, p.span) for p in cmd.problems], cmd.heredocs,
                        [(n, [w.text for w in ws], a) for n, ws, a in cmd.arrays]))
        return out

    rng = random.Random(9)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
             for _ in range(1500)]
    fast = [run(t) for t in texts]
    saved = shell._BLANK_LINES
    shell._BLANK_LINES = re.compile(r"(?!)")  # never matches: every line lexed
    try:
        slow = [run(t) for t in texts]
    finally:
        shell._BLANK_LINES = saved
    for text, a, b in zip(texts, fast, slow):
        assert a == b, text


def test_a_paragraph_of_many_gpu_mentions_keeps_only_the_last():
    """The GPU a paragraph states is its last mention on a line (nearest the block); each
    mention was kept as a place until the end of the line (a 9 MiB paragraph: 550 MiB)."""
    import tracemalloc

    from mgpu_lint.source import SourceFile
    from mgpu_lint.sources import markdown

    line = "8×H100 " * 20_000 + "on 2×A100 and on 4 GPUs"
    source = SourceFile("README.md", line, "markdown")
    tracemalloc.start()
    gpu, count = markdown._gpu_in(source, line, 0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (gpu.value, count.value) == ("A100", "2")
    assert line[gpu.span.start:gpu.span.end] == "2×A100"
    assert peak < 1 << 20, peak  # 20,000 places took about 8 MB
    gpu, count = markdown._gpu_in(source, "with 8 GPUs and then on two GPUs", 0)
    assert gpu is None and count.value == "2"


def test_dollars_that_expand_nothing_in_double_quotes_are_one_piece(monkeypatch):
    """After a double-quoted word's last `}`, its `$`s that expand nothing (`${` with no close)
    and the text between them are copied as one piece, not a `$` at a time (4 MiB of
    `"${${${…` took 11 s); the word and its places are what they were."""
    from mgpu_lint import shell
    from mgpu_lint.source import MapBuilder

    calls = [0]
    add_run = MapBuilder.add_run

    def counting(self, *args):
        calls[0] += 1
        return add_run(self, *args)

    monkeypatch.setattr(MapBuilder, "add_run", counting)
    text = 'echo "a\\"${x}' + "${" * 20_000 + '$"'
    (cmd,) = shell.split_commands(text, resolve={"x": "v"}.get)
    word = cmd.words[1]
    assert word.text == 'a"v' + "${" * 20_000 + "$"
    assert calls[0] < 100, calls[0]  # 40,000 before: one per `$` and one per `{`
    # the first `${` is written at 13, the last `$` just before the closing quote
    assert word.cmap.span(3, 4).start == 13 and word.cmap.span(3, 5).end == 15
    assert word.cmap.span(len(word.text) - 1, len(word.text)).start == len(text) - 2


def test_a_word_of_many_known_references_is_not_parsed_reference_by_reference(monkeypatch):
    """`$NAME` of a known one-field value is added where it is lexed; each was parsed again and
    asked whether it is split (a 4 MiB word of 2 million `$x`: 11.5 s, now 6.5 s).  The word
    and each character's reference are what they were; a value with blanks is still split and
    an unknown one still unresolved."""
    from mgpu_lint import shell

    calls = [0]
    expand = shell._expand

    def counting(*args, **kw):
        calls[0] += 1
        return expand(*args, **kw)

    monkeypatch.setattr(shell, "_expand", counting)
    text = "echo m" + "$x" * 1000 + " $y $z"
    (cmd,) = shell.split_commands(text, resolve={"x": "ab", "y": "c d"}.get)
    assert calls[0] == 1  # $y (split into fields); 1,002 before, and $z too until unknown
    # bare names were added where they are lexed
    assert [w.text for w in cmd.words] == ["echo", "m" + "ab" * 1000, "c", "d", "$z"]
    word = cmd.words[1]
    assert word.cmap.span(0, 1).start == 5
    for k in (0, 1, 999):  # both characters of the k-th value map to its `$x`
        at = 6 + 2 * k
        assert (word.cmap.span(1 + 2 * k, 3 + 2 * k).start,
                word.cmap.span(1 + 2 * k, 3 + 2 * k).end) == (at, at + 2)
    assert [r.name for r in cmd.words[4].unresolved] == ["z"]


def test_every_program_the_launch_search_reads_is_one_it_looks_at() -> None:
    """search_script skips a command whose program is none of commandline._PROGRAMS (or a
    python): every name _unwrap and find_launches compare a program's name with must be there,
    else a launch behind a new wrapper would be skipped."""
    import ast
    import inspect

    from mgpu_lint.source import CharMap, Word
    from mgpu_lint.sources import commandline

    compared: set[str] = set()
    for fn in (commandline._unwrap, commandline.find_launches):
        for node in ast.walk(ast.parse(inspect.getsource(fn))):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and \
                    node.left.id == "name":
                for right in node.comparators:
                    if isinstance(right, ast.Constant):
                        compared.add(right.value)
                    elif isinstance(right, (ast.Tuple, ast.Set, ast.List)):
                        compared.update(e.value for e in right.elts)
                    elif isinstance(right, ast.Name):
                        compared.update(getattr(commandline, right.id))
    assert len(compared) > 30 and compared <= commandline._PROGRAMS, \
        sorted(compared - commandline._PROGRAMS)
    assert all(commandline._may_launch(Word(p, CharMap.linear(0, len(p))))
               for p in ("/usr/bin/vllm", "python3.11", "python", "./llama-server/"))
    assert not commandline._may_launch(Word("a", CharMap.linear(0, 1)))
