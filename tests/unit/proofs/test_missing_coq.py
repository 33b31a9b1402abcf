"""A machine without Coq: the proof checker's one line names the true cause (coqc is not installed)
and its fix, never a sandbox failure, whichever sandbox runs the host's programs. The PATH is
emptied for the host's own lookup (`coq.coqc_version`), and the sandbox's probe is made to find no
coqc inside, as on such a machine; CI's .ci/fresh-machine.sh runs the whole default with coqc
hidden in a mount namespace."""

from __future__ import annotations

import pytest

from tcsexam.errors import InputError
from tcsexam.proofs import check as proof_check
from tcsexam.proofs import coq


@pytest.fixture
def no_coqc(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    coq.coqc_version.cache_clear()
    monkeypatch.setattr(proof_check, "_PROBED", {})
    monkeypatch.setattr(
        proof_check, "_probe_coq", lambda box, limiter: f"sandbox {box.name}: coqc does not run inside: not found"
    )
    yield
    coq.coqc_version.cache_clear()


@pytest.mark.parametrize("sandbox", ["auto", "local"])
def test_no_coqc_is_not_installed_with_its_fix(no_coqc, sandbox):
    with pytest.raises(InputError) as err:
        proof_check.choose_proof_sandbox(sandbox, allow_unsandboxed=True)
    message = str(err.value)
    assert message == coq.NOT_INSTALLED
    assert "not installed" in message and "make setup-coq" in message and "apt-get install coq" in message
    assert "sandbox" not in message.split(";")[0]


def test_an_image_sandbox_keeps_its_own_reason(no_coqc, monkeypatch):
    """Docker and Apptainer run their image's coqc: a missing one there is the image's fault."""

    class Image:
        name = "docker"
        uses_host_programs = False

    monkeypatch.setattr(
        proof_check, "choose_sandbox", lambda name, allow_unsandboxed=False, docker_image=None: (Image(), "docker")
    )
    with pytest.raises(InputError, match="sandbox docker: coqc does not run inside"):
        proof_check.choose_proof_sandbox("docker")
