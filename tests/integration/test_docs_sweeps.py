"""docs/guides/sweeps.md: its example runs as a script (a Dask LocalCluster with two workers) and
prints the table of the four-bar sweep, every case on the base state's branch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "sweeps.md"


def test_sweeps_page_dask_example_runs_as_a_script(tmp_path):
    pytest.importorskip("dask.distributed")
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1 and 'if __name__ == "__main__":' in blocks[0]
    assert "LocalCluster(n_workers=2, threads_per_worker=1)" in blocks[0]
    script = tmp_path / "sweep_example.py"
    checks = ("    assert res.runner in ('dask', 'serial') and len(res) == 200\n"
              "    assert not res.failed and res.table['branch_ok'].all()\n")
    script.write_text(blocks[0] + checks, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "final_q1" in out.stdout and "[200 rows x 4 columns]" in out.stdout
