"""What torch.testing._internal.common_utils needs of the expecttest package (which Debian does
not package) to import PyTorch's OpInfo database: ACCEPT and a TestCase base class. Inline
expectations are never used by op_db's sample inputs."""

import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True
