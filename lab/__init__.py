"""The strategy lab: policies in process at engine speed, with what a bot would see (docs/lab.md)."""
