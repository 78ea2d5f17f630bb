// HDF5's handles for native types, property defaults and file-access flags are macros
// that expand to function calls or casts, which Swift cannot import. These static-inline
// shims give them names Swift can call.
#include <hdf5.h>

static inline hid_t shim_H5P_DEFAULT(void) { return H5P_DEFAULT; }
static inline hid_t shim_H5S_ALL(void) { return H5S_ALL; }
static inline unsigned shim_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline unsigned shim_H5F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }

static inline hid_t shim_H5T_NATIVE_FLOAT(void) { return H5T_NATIVE_FLOAT; }
static inline hid_t shim_H5T_NATIVE_DOUBLE(void) { return H5T_NATIVE_DOUBLE; }
static inline hid_t shim_H5T_NATIVE_INT8(void) { return H5T_NATIVE_INT8; }
static inline hid_t shim_H5T_NATIVE_UINT8(void) { return H5T_NATIVE_UINT8; }
static inline hid_t shim_H5T_NATIVE_INT32(void) { return H5T_NATIVE_INT32; }
static inline hid_t shim_H5T_NATIVE_INT64(void) { return H5T_NATIVE_INT64; }
/// Little-endian IEEE half precision does not exist as a predefined HDF5 type in 1.10;
/// h5py writes it as a 16-bit float with this layout, so reads use the file's own type.
static inline hid_t shim_H5T_IEEE_F32LE(void) { return H5T_IEEE_F32LE; }

/// Silences HDF5's default error printer; errors are reported as typed Swift errors instead.
static inline void shim_H5_silence_errors(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/// libhdf5 reports a cut-off file only on its error stack (minor code H5E_TRUNCATED);
/// this walks the current stack so the reader can say "truncated" rather than "corrupt".
static herr_t shim_H5_truncation_visitor(unsigned depth, const H5E_error2_t *error, void *found) {
    (void)depth;
    if (error->min_num == H5E_TRUNCATED) { *(int *)found = 1; }
    return 0;
}
static inline int shim_H5_error_stack_reports_truncation(void) {
    int found = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, shim_H5_truncation_visitor, &found);
    return found;
}
