"""RL Metrics Atlas: the sources (YAML) become a checked atlas with one edition per TRL release line, then pages,
a static site and printable cheat-sheets. The sub-packages are the pipeline, and a module imports only from its own
layer or the layers before it (`tests/test_layers.py` holds every module to this):

    errors, cache, install, workers  ->  read  ->  resolve  ->  check  ->  render  ->  build  ->  print
        ->  doctor  ->  pipeline, serve, cli

`doctor` (a user's own run against the atlas's rules) reads the editions and the page words; only the top layer
uses it.
"""

LAYERS = (("errors", "cache", "install", "workers"), ("read",), ("resolve",), ("check",), ("render",), ("build",),
          ("print",), ("doctor",), ("pipeline", "serve", "cli"))
