"""proofs_check.properties: the Hypothesis checks leave no .hypothesis/ folder behind."""


def test_hypothesis_checks_leave_no_hypothesis_folder(tmp_path, monkeypatch):
    from proofs_check.properties import check_nuclear_inequality

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    check_nuclear_inequality(quick=True)
    assert list(tmp_path.iterdir()) == []
