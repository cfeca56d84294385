"""Python client for the Quarry REST API (standard library only).

    from quarry_client import Client
    hits = Client().search("notes", "installer")
"""

from .client import DEFAULT_URL, OPERATIONS, Client
from .errors import *  # noqa: F401,F403  (one class per error code)
from .models import *  # noqa: F401,F403

__version__ = "0.1.0"

#: The same class under the name the JavaScript client uses.
QuarryClient = Client
