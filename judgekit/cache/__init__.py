"""The response cache: keys, the DuckDB file's schema, the store the engine uses, and admin.

- :mod:`judgekit.cache.keys` -- :func:`cache_key`, what is and is not in a key.
- :mod:`judgekit.cache.schema` -- tables, migrations, ``result_<name>`` tables.
- :mod:`judgekit.cache.store` -- :class:`CacheStore`, one DuckDB connection in one thread.
- :mod:`judgekit.cache.admin` -- ``stats``, ``export``, ``prune`` for the CLI.
"""

from judgekit.cache.keys import cache_key, messages_fingerprint
from judgekit.cache.schema import SCHEMA_VERSION, CacheSchemaError
from judgekit.cache.store import CacheCounters, CacheStore, RequestMeta

__all__ = [
    "cache_key",
    "messages_fingerprint",
    "CacheStore",
    "RequestMeta",
    "CacheCounters",
    "CacheSchemaError",
    "SCHEMA_VERSION",
]
