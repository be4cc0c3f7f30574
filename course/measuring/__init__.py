"""Tools that measure the course rather than run it: how well the grader names mistakes (grader_accuracy), what the
probes may reuse between runs (probe_reuse), synthetic classes for the similarity step (planted_copies) and the class
report (synthetic_records). The product never imports them; make grader-report, the benchmarks and the tests do."""
