// ImageLimits lives in SAMImage so that SAMVideoFiles needs no PNG/JPEG library; code that imports
// only this module and names it keeps compiling.
@_exported import struct SAMImage.ImageLimits
