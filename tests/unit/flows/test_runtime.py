"""Process settings chosen at CLI start: passive OpenMP waiting and one thread per core,
never overriding what the user set."""

from flows.runtime import configure_process


def test_defaults_are_set_for_the_machine() -> None:
    environ: dict[str, str] = {}
    applied = configure_process(environ, cores=2)
    assert (
        environ == {"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"} == applied
    )


def test_the_users_settings_win() -> None:
    environ = {"OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "1"}
    applied = configure_process(environ, cores=8)
    assert environ["OMP_WAIT_POLICY"] == "ACTIVE" and environ["OMP_NUM_THREADS"] == "1"
    assert applied == {"MKL_NUM_THREADS": "8"}
