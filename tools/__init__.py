"""Commands that are not the library: benchmarks, the soak, the mutation check."""
