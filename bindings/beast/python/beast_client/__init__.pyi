from ._core import BodyTooLarge as BodyTooLarge
from ._core import Client as Client
from ._core import Headers as Headers
from ._core import ProtocolError as ProtocolError
from ._core import Response as Response
from ._core import StreamResponse as StreamResponse
from ._core import TLSError as TLSError
from ._core import TooManyRedirects as TooManyRedirects
from ._core import __version__ as __version__
from ._core import boost_version as boost_version

__all__ = [
    "BodyTooLarge",
    "Client",
    "Headers",
    "ProtocolError",
    "Response",
    "StreamResponse",
    "TLSError",
    "TooManyRedirects",
    "__version__",
    "boost_version",
]
