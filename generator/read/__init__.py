"""Read: source files (YAML) -> typed, immutable models that keep the file and line of every field. Never writes."""
