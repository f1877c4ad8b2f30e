# The requirements check: messages that name what is missing or too old and the version found, and an
# interpreter that really lacks peft (a sys.path without it) answering `hello` with engine-requirements.
import os
import subprocess
import sys
import unittest
from importlib import metadata

from edgerl_torch import requirements
from tests.support import ENGINE_PATH, Engine, scratch_dir


class RequirementsMessageTest(unittest.TestCase):
    def test_all_met_here(self):
        self.assertEqual(requirements.problems(), [])

    def test_a_fake_minimum_names_the_package_and_the_version_found(self):
        found = requirements.problems(minimums={"peft": (99, 0)})
        self.assertEqual(found, [f"peft {metadata.version('peft')} is too old (need 99.0 or newer)"])
        self.assertIn("npm run setup:torch", requirements.message(found))

    def test_missing_package_and_old_python(self):
        found = requirements.problems(
            minimums={"torch": (2, 4), "safetensors": (0, 4)},
            python=(3, 9, 1),
            versions={"torch": None, "safetensors": "0.3.9"},
        )
        self.assertEqual(len(found), 3)
        self.assertIn("Python 3.9.1", found[0])
        self.assertEqual(found[1], "torch is not installed (need 2.4 or newer)")
        self.assertEqual(found[2], "safetensors 0.3.9 is too old (need 0.4 or newer)")

    def test_parse_version(self):
        self.assertEqual(requirements.parse_version("2.13.0+cpu"), (2, 13, 0))
        self.assertEqual(requirements.parse_version("4.45.0.dev0"), (4, 45, 0))
        self.assertEqual(requirements.parse_version("0.13rc1"), (0, 13))
        self.assertLess(requirements.parse_version("4.44.2"), (4, 45))

    def test_module_exits_zero_when_met(self):
        done = subprocess.run(
            [sys.executable, "-m", "edgerl_torch.requirements"],
            env={**os.environ, "PYTHONPATH": ENGINE_PATH},
            capture_output=True,
            text=True,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(f"torch {metadata.version('torch')}", done.stdout)


def site_without(hidden: tuple[str, ...]) -> dict:
    """An environment for `python -S` whose only site directory links every installed package but `hidden`."""
    import torch

    site = os.path.dirname(os.path.dirname(torch.__file__))
    path = scratch_dir("site")
    for name in os.listdir(site):
        if not any(name == h or name.startswith(f"{h}-") for h in hidden):
            os.symlink(os.path.join(site, name), os.path.join(path, name))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([ENGINE_PATH, path])}


class MissingPackagesTest(unittest.TestCase):
    """Interpreters that really lack peft, or torch and peft: the check names them, `hello` answers."""

    @classmethod
    def setUpClass(cls):
        cls.no_peft = site_without(("peft",))
        cls.no_torch = site_without(("torch", "peft"))

    def test_requirements_module_names_peft(self):
        done = subprocess.run(
            [sys.executable, "-S", "-m", "edgerl_torch.requirements"], env=self.no_peft, capture_output=True, text=True
        )
        self.assertEqual(done.returncode, 1)
        self.assertIn("peft is not installed (need 0.13 or newer)", done.stderr)
        self.assertNotIn("torch is not installed", done.stderr)

    def test_engine_answers_engine_requirements_and_keeps_serving(self):
        for env, missing in ((self.no_peft, ["peft"]), (self.no_torch, ["torch", "peft"])):
            engine = Engine(env=env, python_flags=("-S",))
            try:
                for op, args in (("hello", {"protocol": 1}), ("load-model", {"model_dir": "/nonexistent"})):
                    header, _, _ = engine.call(op, args)
                    self.assertFalse(header["ok"], op)
                    self.assertEqual(header["error"]["code"], "engine-requirements")
                    for name in missing:
                        self.assertIn(f"{name} is not installed", header["error"]["message"])
                header, _, _ = engine.call("shutdown")
                self.assertTrue(header["ok"])
            finally:
                self.assertEqual(engine.close(), 0)


if __name__ == "__main__":
    unittest.main()
