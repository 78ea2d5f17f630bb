#!/usr/bin/env bash
# Builds Examples/DependentPackage against a tagged clone of this repository, through
# `.package(url: "file://…", from: "0.1.0")` as an app adds the toolkit, and runs it on the committed
# tiny model (converted first by this repository's release samconvert) and the bundled photo. SwiftPM
# refuses a versioned dependency whose targets carry unsafeFlags, so this fails if one creeps back.
# Then `ldd` of the app's binary must list none of the converters' libraries (libhdf5, libprotobuf-c,
# OpenSSL's libcrypto) nor FFmpeg's (SAMVideoFiles only): the runtime product links only what
# segmenting needs. A second app reads a video file through SAMVideoFiles: its binary links FFmpeg
# and neither libpng nor libjpeg. Only committed work is cloned.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
samconvert="${1:?usage: check-dependency.sh PATH/TO/samconvert}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git clone -q "$root" "$work/SAMPort"
git -C "$work/SAMPort" tag 0.1.0
cp -R "$root/Examples/DependentPackage" "$work/app"
"$samconvert" "$root/reference_outputs/tiny/mobile_sam.h5" --config "$root/reference_outputs/tiny/config.json" \
    --out "$work/tiny.samw" >/dev/null
export SAM_PORT_URL="file://$work/SAMPort"
swift build --package-path "$work/app" --product segment-photo
swift build --package-path "$work/app" --product read-video
bin="$(swift build --package-path "$work/app" --show-bin-path)"
app="$bin/segment-photo" video_app="$bin/read-video"
"$app" "$work/tiny.samw" "$root/reference_outputs/demo/photo.png" 64 40
"$video_app" "$root/Tests/SAMVideoFilesTests/Fixtures/tiny_h264.mp4"

if [ "$(uname)" = Linux ]; then
    linked="$(ldd "$app")"
    if echo "$linked" | grep -E 'libhdf5|libprotobuf-c|libcrypto|libssl|libavformat|libavcodec|libswscale|libavutil'; then
        echo "check-dependency: the app links a converter or video library (above); the runtime product must not" >&2
        exit 1
    fi
    echo "$linked" | grep -q libopenblas || { echo "check-dependency: ldd shows no libopenblas: is this the app?" >&2; exit 1; }
    # The libraries the video app's binary asks for itself (ELF NEEDED): Debian's libavformat and
    # libavcodec bring libpng, libjpeg and libcrypto of their own, which ldd would list too.
    video_needed="$(readelf -d "$video_app" | grep NEEDED)"
    if echo "$video_needed" | grep -E 'libpng|libjpeg|libhdf5|libprotobuf-c|libcrypto|libssl'; then
        echo "check-dependency: the video app links an image-file or converter library (above); SAMVideoFiles must not" >&2
        exit 1
    fi
    echo "$video_needed" | grep -q libavformat || { echo "check-dependency: the video app needs no libavformat: is this it?" >&2; exit 1; }
fi
echo "check-dependency: the package builds and runs as a versioned dependency, linking no converter library; the video app no image-file library"
