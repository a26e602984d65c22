"""mdpoly's differential fuzzer: generated C programs, built as written and through mdpoly.

- :mod:`.cast`: the program model (a small C AST) and its printer; ``fuzz_prelude.h`` is the
  fixed input/digest code every program starts with.
- :mod:`.generator`: ``generate(seed) -> Program``, valid and deterministic, exact values.
- :mod:`.runner`: ``check_program(prog, target) -> Outcome`` (build, mdpoly, build, run, compare).
- :mod:`.reduce`: ``reduce_failure`` shrinks a failing program to a reproducer.
- :mod:`.campaign`: many seeds -> counts and reproducers; :mod:`.known`: known bugs' tags.
- ``python -m tests.fuzz --fuzz N --seed S --target openmp|opencl --jobs J``: a campaign.
- ``test_fuzz.py``: CI's fixed budget; ``test_tsan.py``: ThreadSanitizer over generated OpenMP.
"""
