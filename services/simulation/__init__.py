"""Generated streams and the table simulator: upstream traffic for tests, benchmarks and demos."""
