"""Tests of jobset.progress: the line the agent parses (agent/progress_file.h's
grammar), the atomic rewrite beside the file, and nothing done outside
jobset-agent."""

import os
import re
import tempfile
import unittest
from unittest import mock

from jobset import progress

# The agent's grammar for one line (agent/progress_file.h).
LINE = re.compile(r"^step=\d+( checkpoint_step=\d+)?\n$")


class ProgressTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "progress")

    def read(self):
        with open(self.path) as f:
            return f.read()

    def test_unset_variable_writes_nothing(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertFalse(progress.report(step=3))
        self.assertEqual(os.listdir(self.dir), [])

    def test_writes_the_step(self):
        with mock.patch.dict(os.environ, {progress.ENV: self.path}):
            self.assertTrue(progress.report(step=42))
        self.assertEqual(self.read(), "step=42\n")
        self.assertRegex(self.read(), LINE)

    def test_writes_the_checkpoint(self):
        with mock.patch.dict(os.environ, {progress.ENV: self.path}):
            self.assertTrue(progress.report(step=120, checkpoint_step=100))
        self.assertEqual(self.read(), "step=120 checkpoint_step=100\n")
        self.assertRegex(self.read(), LINE)

    def test_rewrites_by_rename_leaving_one_line_and_no_temporary(self):
        with mock.patch.dict(os.environ, {progress.ENV: self.path}):
            progress.report(step=1)
            inode = os.stat(self.path).st_ino
            progress.report(step=2, checkpoint_step=2)
        self.assertEqual(self.read(), "step=2 checkpoint_step=2\n")
        # A new file renamed over the old one: a reader sees one or the
        # other, never half of one; one link (the agent refuses hard links).
        self.assertNotEqual(os.stat(self.path).st_ino, inode)
        self.assertEqual(os.stat(self.path).st_nlink, 1)
        self.assertEqual(os.listdir(self.dir), ["progress"])

    def test_refuses_what_the_agent_would(self):
        with mock.patch.dict(os.environ, {progress.ENV: self.path}):
            for step, checkpoint, error in [
                (-1, None, ValueError),
                (progress.MAX_STEP + 1, None, ValueError),
                (5, 6, ValueError),
                (5, -1, ValueError),
                (1.5, None, TypeError),
                (True, None, TypeError),
                ("7", None, TypeError),
            ]:
                with self.assertRaises(error, msg=(step, checkpoint)):
                    progress.report(step=step, checkpoint_step=checkpoint)
        self.assertFalse(os.path.exists(self.path))
        self.assertEqual(progress.line(progress.MAX_STEP),
                         f"step={progress.MAX_STEP}\n")

    def test_missing_directory_raises_and_leaves_nothing(self):
        missing = os.path.join(self.dir, "gone", "progress")
        with mock.patch.dict(os.environ, {progress.ENV: missing}):
            with self.assertRaises(OSError):
                progress.report(step=1)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
