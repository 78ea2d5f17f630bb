#!/usr/bin/env bash
# Makes the committed video fixtures and their expected frames with the ffmpeg command-line tool
# (Debian 12's ffmpeg 5.1: `apt-get install ffmpeg`). Only this script needs the tool; the tests
# read the committed files. See README.md beside it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
frames="$here/../../../reference_outputs/sam2_tiny_video/frames"   # 8 JPEGs, 64x48
cd "$here"
ff=(ffmpeg -nostdin -hide_banner -loglevel error -y)

# H.264 in MP4, limited range: keyframes every 4 frames and B-frames, so seeking and reordering show.
"${ff[@]}" -framerate 8 -i "$frames/%05d.jpg" -c:v libx264 -preset medium -threads 1 -pix_fmt yuv420p \
    -g 4 -bf 2 -movflags +faststart -map_metadata -1 -fflags +bitexact -flags:v +bitexact tiny_h264.mp4
# MPEG-4 part 2 in AVI, colour range and matrix left unspecified.
"${ff[@]}" -framerate 8 -i "$frames/%05d.jpg" -c:v mpeg4 -q:v 3 -g 4 -bf 0 -threads 1 -pix_fmt yuv420p \
    -fflags +bitexact -flags:v +bitexact tiny_mpeg4.avi
# VP9 in WebM, full range, BT.709 matrix.
"${ff[@]}" -framerate 8 -i "$frames/%05d.jpg" -c:v libvpx-vp9 -crf 30 -b:v 0 -g 4 -threads 1 -pix_fmt yuv420p \
    -colorspace bt709 -color_range pc -fflags +bitexact tiny_vp9_fullrange.webm

# The MP4's H.264 stream as a raw Annex B file: no container, no timestamps of its own.
"${ff[@]}" -i tiny_h264.mp4 -c:v copy -bsf:v h264_mp4toannexb -f h264 tiny_h264_raw.h264
# Raw H.264 whose size changes after frame 3: frames 0-3 at 64x48, then 4 frames at 32x24.
"${ff[@]}" -framerate 8 -i "$frames/%05d.jpg" -frames:v 4 -c:v libx264 -threads 1 -pix_fmt yuv420p -bf 0 \
    -fflags +bitexact -flags:v +bitexact -f h264 /tmp/size_a.h264
"${ff[@]}" -framerate 8 -i "$frames/%05d.jpg" -frames:v 4 -vf scale=32:24 -c:v libx264 -threads 1 -pix_fmt yuv420p -bf 0 \
    -fflags +bitexact -flags:v +bitexact -f h264 /tmp/size_b.h264
cat /tmp/size_a.h264 /tmp/size_b.h264 > size_change.h264 && rm /tmp/size_a.h264 /tmp/size_b.h264
# A file with a stream but no video: 10 ms of silence.
"${ff[@]}" -f lavfi -i anullsrc=r=8000:cl=mono -t 0.01 -c:a pcm_u8 -fflags +bitexact audio_only.wav

# The expected frames: what `ffmpeg -i VIDEO -pix_fmt rgb24` decodes, every frame as stored
# (-fps_mode passthrough: no frame dropped or repeated), one PNG per frame.
for video in tiny_h264.mp4 tiny_mpeg4.avi tiny_vp9_fullrange.webm; do
    out="expected_${video%%.*}"
    rm -rf "$out" && mkdir "$out"
    "${ff[@]}" -i "$video" -fps_mode passthrough -pix_fmt rgb24 -f image2 -start_number 0 "$out/%05d.png"
done
