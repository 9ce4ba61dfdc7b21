"""Jinja2 templates of the riskmon reports (shipped as riskmon.templates)."""
