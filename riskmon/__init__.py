"""riskmon: credit-risk model monitoring."""

__version__ = "0.1.0.dev0"
