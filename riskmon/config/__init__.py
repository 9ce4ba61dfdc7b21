"""The deployment's configuration: one YAML file, validated into one typed model.

:func:`load_config` is the only place YAML is parsed. ``${VAR}`` (or ``${VAR:-default}``) in any
string is replaced by the environment variable before validation, so secrets stay out of the
file. Every problem becomes a :class:`~riskmon.errors.ConfigError` naming the file, the key path
(``models[1].source.url``) and what was expected; passwords are masked in every message.
"""

from riskmon.config._backtest import MAX_GRADES, Backtest
from riskmon.config._base import Period
from riskmon.config._deployment import (
    NotificationsConfig,
    RiskmonConfig,
    SchedulerConfig,
    SmtpConfig,
    StoreConfig,
    masked_config,
    model_fingerprint,
)
from riskmon.config._diff import ConfigChange, config_changes
from riskmon.config._families import (
    Calibration,
    Challenger,
    Costs,
    GradeColumn,
    PointsToPd,
    Rating,
    Vintages,
)
from riskmon.config._load import (
    key_path,
    load_config,
    parse_config,
    resolve_config_path,
)
from riskmon.config._models import (
    CONFIG_ENV_VAR,
    DEFAULT_CONFIG_PATH,
    DEFAULT_STORE_URL,
    RESERVED_VARIABLES,
    Bins,
    Characteristic,
    ColumnMap,
    CronExpression,
    ModelConfig,
    ModelKind,
    NotifyChannel,
    Window,
)
from riskmon.config._register import DOCUMENTATION_KEYS, Approval, Documentation, Documented
from riskmon.config._source import DatabaseURL, SourceConfig
from riskmon.config._thresholds import Band, Drop, PValueLevels, Thresholds

__all__ = [
    "CONFIG_ENV_VAR",
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_STORE_URL",
    "DOCUMENTATION_KEYS",
    "MAX_GRADES",
    "RESERVED_VARIABLES",
    "Approval",
    "Backtest",
    "Band",
    "Bins",
    "Calibration",
    "Challenger",
    "Characteristic",
    "ColumnMap",
    "ConfigChange",
    "Costs",
    "CronExpression",
    "DatabaseURL",
    "Documentation",
    "Documented",
    "Drop",
    "GradeColumn",
    "ModelConfig",
    "ModelKind",
    "NotificationsConfig",
    "NotifyChannel",
    "PValueLevels",
    "Period",
    "PointsToPd",
    "Rating",
    "RiskmonConfig",
    "SchedulerConfig",
    "SmtpConfig",
    "SourceConfig",
    "StoreConfig",
    "Thresholds",
    "Vintages",
    "Window",
    "config_changes",
    "key_path",
    "load_config",
    "masked_config",
    "model_fingerprint",
    "parse_config",
    "resolve_config_path",
]
