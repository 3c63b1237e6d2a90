"""CPU-bound workload for test_jit.py, run as `python3.12 -X perf jit_work.py [SECONDS]`.

With -X perf, CPython 3.12 enters every Python function through a small
trampoline it compiles into anonymous executable memory and names in
/tmp/perf-<pid>.map as "py::<qualname>:<file>". The trampoline is a few
instructions around the call into the interpreter, so a sample's *leaf* lands
in it only when calls are very frequent: the hot functions here are tiny and
called millions of times, which puts a few percent of the samples' IPs inside
their trampolines (and also makes them callers of the interpreter frames).
"""
import sys
import time


def hot_alpha_add(x):
    return x + 1


def hot_beta_xor(x):
    return x ^ 5


def hot_gamma_mul(x):
    return x * 3


def drive(n):
    a = b = c = 0
    for i in range(n):
        a = hot_alpha_add(a)
        b = hot_beta_xor(b)
        c = hot_gamma_mul(i)
    return a + b + c


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    end = time.monotonic() + secs
    total = 0
    while time.monotonic() < end:
        total += drive(20000)
    print(total & 0xFFFF)


if __name__ == "__main__":
    main()
