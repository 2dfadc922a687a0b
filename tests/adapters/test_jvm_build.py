"""``rmqha build-classpath``: RocketMQ's driven classes from a source tree, without Maven.

CI has no RocketMQ checkout: the bad inputs are checked here as a user meets them (one
line, exit 2), and the build itself where ``RMQHA_ROCKETMQ_SOURCE`` names a checkout.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.jvm_build import BUILD_PROPERTIES, ROOTS, source_version

SOURCE = os.environ.get("RMQHA_ROCKETMQ_SOURCE")


def rmqha(*args):
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True)


def test_a_missing_source_is_one_line_and_exit_2(tmp_path):
    done = rmqha("build-classpath", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a directory" in done.stderr


def test_a_tree_that_is_not_rocketmq_is_one_line_and_exit_2(tmp_path):
    done = rmqha("build-classpath", str(tmp_path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "not a RocketMQ 5.1+ source tree" in done.stderr


def test_a_directory_rmqha_did_not_make_is_never_overwritten(tmp_path):
    source = tmp_path / "rocketmq"
    for root in ROOTS:
        (source / root).parent.mkdir(parents=True, exist_ok=True)
        (source / root).write_text("class X {}")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    done = rmqha("build-classpath", str(source), "--out", str(out))
    assert done.returncode == 2 and "was not made by rmqha" in done.stderr
    assert (out / "notes.txt").read_text() == "keep me"


def test_the_version_comes_from_the_pom_and_its_revision(tmp_path):
    (tmp_path / "pom.xml").write_text("<project><parent><version>18</version></parent>"
                                      "<version>${revision}</version><properties><revision>5.3.4-SNAPSHOT"
                                      "</revision></properties></project>")
    assert source_version(tmp_path) == ("5.3.4-SNAPSHOT", "")


@pytest.mark.jvm
@pytest.mark.skipif(not SOURCE, reason="RMQHA_ROCKETMQ_SOURCE is not set")
def test_a_checkout_builds(tmp_path):
    out = tmp_path / "classes"
    done = rmqha("build-classpath", SOURCE, "--out", str(out), "--commit", "under-test")
    assert done.returncode == 0, done.stderr
    assert (out / "org/apache/rocketmq/controller/impl/manager/ReplicasInfoManager.class").is_file()
    assert (out / "org/apache/rocketmq/store/ha/autoswitch/EpochFileCache.class").is_file()
    assert "commit=under-test" in (out / BUILD_PROPERTIES).read_text()
    assert "export RMQHA_ROCKETMQ_CLASSPATH=" in done.stdout
