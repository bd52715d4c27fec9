import signal

from tests.docs.sdk_exit import exited_cleanly

FINALIZING = (
    "committed 1\nFatal Python error: PyGILState_Release: thread state 0x7eff must be current "
    "when releasing\nPython runtime state: finalizing (tstate=0x00007eff)\n"
)


def test_only_the_sdk_crash_while_finalizing_counts_as_a_clean_exit():
    assert exited_cleanly(0, "")
    assert exited_cleanly(-signal.SIGABRT, FINALIZING)
    assert not exited_cleanly(-signal.SIGABRT, "Fatal Python error: Segmentation fault")
    assert not exited_cleanly(1, FINALIZING)
    assert not exited_cleanly(-signal.SIGABRT, FINALIZING.replace("finalizing", "initialized"))
