"""Jinja templates for the rendered artifacts, shipped inside the wheel."""
