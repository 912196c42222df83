"""Attack families of the reliability benchmark (`benchmarks/bench_reliability.py`).

Every `*_cases.py` module here registers its cases with `registry.case`; the benchmark imports
them all, so a new family is one new module."""
