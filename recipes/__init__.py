"""Built-in recipe catalog (YAML), shipped inside the wheel."""
