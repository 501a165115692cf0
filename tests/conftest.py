"""Settings every test session shares."""

from hypothesis import settings

# Properties are checked for what they assert, never for how long an example takes: on a loaded
# or slow machine an example's first run (a schema compiled, a module imported) can pass
# hypothesis' default 200 ms deadline and fail a test that is right. Speed is measured in the
# benchmarks instead.
settings.register_profile("croupier", deadline=None)
settings.load_profile("croupier")
