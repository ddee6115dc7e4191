"""proofs_check.atlas_report: the atlas run (certificates over the grid) and the report it writes."""

import gzip

from proofs_check import atlas_report, conjecture
from proofs_check import certificates as C


def test_quick_atlas_report_is_written(tmp_path):
    """The quick atlas writes the report (the theorem first, a certified row of (2,2,2)), the phase plot and the
    gzipped table."""
    report = tmp_path / "r.md"
    assert conjecture.main(["--atlas", "--quick", "--out", str(tmp_path / "c"), "--report", str(report)]) == 0
    text = report.read_text()
    assert text.startswith("# The type-III conjecture: proved") and "(2,2,2,4)" in text
    assert (tmp_path / "c" / "phase.png").stat().st_size > 1000
    with gzip.open(tmp_path / "c" / "atlas.csv.gz", "rt") as fh:
        assert fh.readline().startswith("n_c,s_c,L,K,")
    assert atlas_report.C is C
