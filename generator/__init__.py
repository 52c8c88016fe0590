"""RL Metrics Atlas generator: YAML sources -> validated models -> trilingual, versioned site."""
