#!/usr/bin/env bash
# Builds Examples/DependentPackage against a tagged clone of this repository, through
# `.package(url: "file://…", from: "0.1.0")` as an app adds the toolkit, and runs it on the
# committed tiny model and the bundled photo. SwiftPM refuses a versioned dependency whose targets
# carry unsafeFlags, so this fails if one creeps back. Only committed work is cloned.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git clone -q "$root" "$work/SAMPort"
git -C "$work/SAMPort" tag 0.1.0
cp -R "$root/Examples/DependentPackage" "$work/app"
SAM_PORT_URL="file://$work/SAMPort" swift build --package-path "$work/app" --product segment-photo
"$(SAM_PORT_URL="file://$work/SAMPort" swift build --package-path "$work/app" --show-bin-path)/segment-photo" \
    "$root/reference_outputs/tiny/mobile_sam.h5" "$root/reference_outputs/tiny/config.json" \
    "$root/reference_outputs/demo/photo.png" 64 40
echo "check-dependency: the package builds and runs as a versioned dependency"
