"""A tiny library with two tensor bugs that its own test exercises (for `viewlint verify --run`)."""
