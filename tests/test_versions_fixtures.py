"""Release-pinned fixtures (fixtures/versions/, one case per file): the whole text report, pinned,
plus the finding each file is about."""

from __future__ import annotations

import pytest
from mgpu_lint.cli import main

from .conftest import FIXTURES, ROOT

VERSIONS = FIXTURES / "versions"
FILES = sorted(str(p.relative_to(ROOT)) for p in VERSIONS.iterdir() if p.is_file())

# file → (codes of the parse/version findings, a phrase the report must hold); () = silent
EXPECTED: dict[str, tuple[tuple[str, ...], str | None]] = {
    "compose-latest-new-flag.yaml": ((), None),
    "compose-nightly.yaml": (("MG015",), "`nightly` names no vLLM release"),
    "compose-v0.10.2-deprecated-flag.yaml": (("MG008",), "removed after 0.16.0"),
    "compose-v0.30.0-new-flag.yaml": (("MG004",), "added later (vLLM 0.33.0 accepts it)"),
    "dockerfile-pip-pin-0.8.5.Dockerfile": (("MG016",), "vLLM 0.8.5 rejects the --model"),
    "k8s-digest.yaml": (("MG015",), "names no vLLM release"),
    # the mirror and the proxy are pinned (MG015: 0.11.0 read with 0.11.2's catalog); the fork
    # is not (MG004 for --swap-space, assuming the default release)
    "k8s-v0.11.0-mirrored-images.yaml": (("MG004", "MG015"),
                                         "the catalogued release of the 0.11 line"),
    "k8s-v0.11.2-O-json.yaml": ((), None),
    "k8s-v0.12.0-O-json.yaml": (("MG006",), "-O takes an optimization level"),
    "k8s-v0.19.1-num-scheduler-steps.yaml": (("MG004",), "removed after vLLM 0.10.0"),
    "k8s-v0.30.0-swap-space.yaml": (("MG004",), "removed after vLLM 0.17.1"),
    "k8s-v0.6.6-swap-space.yaml": ((), None),
    "k8s-v0.8.4-same-line.yaml": (("MG015",), "the catalogued release of the 0.8 line"),
    "k8s-v0.8.5-positional-model.yaml": (("MG016",), "rejects it (unrecognized arguments)"),
    "shell-api-server-0.30.0.sh": (("MG008",), "deprecated from vLLM 0.29.0"),
    "shell-pip-pin-0.7.3-no-positional.sh": (("MG016",), "requires the model"),
    "shell-pip-pin-0.7.3-store-boolean.sh": ((), None),
}
VERSION_CODES = {"MG004", "MG005", "MG006", "MG008", "MG013", "MG015", "MG016"}


def lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["--no-color", *args])
    return code, capsys.readouterr().out


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.rsplit("/", 1)[-1] for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES)
def test_report(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    code, out = lint(capsys, path)
    assert out == snapshot
    codes, phrase = EXPECTED[path.rsplit("/", 1)[-1]]
    found = tuple(c for c in VERSION_CODES if f" {c} [" in out)
    assert sorted(found) == sorted(codes), out
    if phrase is not None:
        assert phrase in out
    assert code == (1 if any(c != "MG015" for c in codes) else 0)


def test_target_version_overrides_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    path = "fixtures/versions/shell-api-server-0.30.0.sh"
    code, out = lint(capsys, "--target-version", "vllm==0.28.0", path)
    assert code == 0 and "MG008" not in out
    code, out = lint(capsys, "--target-version", "vllm==0.8.5", path)
    assert code == 0 and "MG015" not in out
