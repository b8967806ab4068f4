"""Conformance suites: spec-driven test cases, checks by the spec's rules, the pytest plugin."""
