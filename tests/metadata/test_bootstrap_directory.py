"""bootstrap.checkpoint read back as the controller reads it (Kafka's BootstrapDirectoryTest): the
file the storage tool writes, the default without one, and a file or directory it cannot use."""

from __future__ import annotations

import pytest

from kafka_lite.common.metadata import ApiMessageAndVersion, FeatureLevelRecord
from kafka_lite.metadata.bootstrap_directory import BootstrapMetadata, read_bootstrap_directory
from kafka_lite.metadata.metadata_version import LATEST_METADATA_VERSION, MetadataVersion
from kafka_lite.server.storage_tool import write_bootstrap_checkpoint

pytestmark = pytest.mark.unit


def test_the_formatted_version_is_read_back(tmp_path):
    write_bootstrap_checkpoint(tmp_path, MetadataVersion.IBP_3_3_IV2)
    bootstrap = read_bootstrap_directory(tmp_path)
    assert bootstrap.metadata_version is MetadataVersion.IBP_3_3_IV2
    assert [(r.message.name, r.message.feature_level) for r in bootstrap.records] == [("metadata.version", 6)]
    assert bootstrap.source == f"the binary bootstrap metadata file: {tmp_path / 'bootstrap.checkpoint'}"


def test_a_directory_without_the_file_bootstraps_at_the_latest_version(tmp_path):
    bootstrap = read_bootstrap_directory(tmp_path)
    assert (bootstrap.metadata_version, bootstrap.source) == (
        LATEST_METADATA_VERSION,
        "the default bootstrap",
    )


def test_what_cannot_bootstrap_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match=f"No such directory as {tmp_path / 'absent'}"):
        read_bootstrap_directory(tmp_path / "absent")
    with pytest.raises(
        ValueError, match=r"No FeatureLevelRecord for metadata\.version was found in the test"
    ):
        BootstrapMetadata.from_records([], "the test")
    old = ApiMessageAndVersion(FeatureLevelRecord(name="metadata.version", feature_level=1), 0)
    with pytest.raises(
        ValueError, match=r"versions before 3\.3-IV0 are not supported\. Can.t load metadata from x"
    ):
        BootstrapMetadata.from_records([old], "x")
