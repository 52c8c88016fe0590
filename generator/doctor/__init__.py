"""atlas doctor: the atlas's healthy-range rules applied to a user's own run. Reading a history (`readers`), the
rule book compiled from the editions (`rulebook`), evaluating it (`evaluate`), the report in a language
(`report`, `html`), and the same rules while a run trains (`callback`). A layer of its own between `print` and the
top: it reads the editions and the page words, and only the top layer (the CLI, the pipeline) uses it."""
