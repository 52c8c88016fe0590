"""Build: generated Markdown -> a static site per release line with mkdocs (strict), published atomically."""
