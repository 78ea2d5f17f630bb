// HDF5's handles for native types, property defaults and file-access flags are macros
// that expand to function calls or casts, which Swift cannot import. These static-inline
// shims give them names Swift can call.
#include <hdf5.h>
#include <string.h>

static inline hid_t shim_H5P_DEFAULT(void) { return H5P_DEFAULT; }
static inline hid_t shim_H5S_ALL(void) { return H5S_ALL; }
static inline unsigned shim_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline unsigned shim_H5F_ACC_TRUNC(void) { return H5F_ACC_TRUNC; }
static inline unsigned shim_H5F_ACC_RDWR(void) { return H5F_ACC_RDWR; }
static inline H5F_libver_t shim_H5F_LIBVER_LATEST(void) { return H5F_LIBVER_LATEST; }

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

// Property-list classes (macros over library globals), for creating lists.
static inline hid_t shim_H5P_DATASET_CREATE(void) { return H5P_DATASET_CREATE; }
static inline hid_t shim_H5P_FILE_ACCESS(void) { return H5P_FILE_ACCESS; }
static inline hid_t shim_H5P_LINK_ACCESS(void) { return H5P_LINK_ACCESS; }
static inline hid_t shim_H5P_LINK_CREATE(void) { return H5P_LINK_CREATE; }
static inline hid_t shim_H5P_DATASET_ACCESS(void) { return H5P_DATASET_ACCESS; }

/// An access list of class `list_class` (link access for H5Oopen, dataset access for H5Dopen2) that
/// refuses to traverse external links: a path leading through one (also through a soft link
/// pointing at one) fails instead of opening another file.
static herr_t shim_refuse_external_link(const char *parent_file, const char *parent_group, const char *child_file,
                                        const char *child_object, unsigned *flags, hid_t fapl, void *data) {
    (void)parent_file; (void)parent_group; (void)child_file; (void)child_object; (void)flags; (void)fapl; (void)data;
    return -1;
}
static inline hid_t shim_H5_access_within_file(hid_t list_class) {
    hid_t lapl = H5Pcreate(list_class);
    if (lapl < 0) { return lapl; }
    if (H5Pset_elink_cb(lapl, shim_refuse_external_link, NULL) < 0) { H5Pclose(lapl); return -1; }
    return lapl;
}

/// A file-access property list that takes no file lock: files are only read (or, in tests, written
/// by one builder at a time), and a lock taken by a process that then starts another process is
/// inherited and held by that child for as long as it runs, so later opens of the file fail.
static inline hid_t shim_H5_file_access_without_locking(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) { return fapl; }
    if (H5Pset_file_locking(fapl, 0, 1) < 0) { H5Pclose(fapl); return -1; }
    return fapl;
}

/// An object's identity inside its file (its header's address in 1.10, its token from 1.12), its
/// type (H5O_type_t) and attribute count, so a walk can visit each group once however many links
/// lead to it. H5Oget_info's signature changed in 1.12; this hides which one is called.
static inline int shim_H5_object_identity(hid_t object, unsigned long *fileno, uint64_t key[2], int *type,
                                          unsigned long long *attributes) {
    key[0] = 0; key[1] = 0;
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    if (H5Oget_info3(object, &info, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS) < 0) { return -1; }
    memcpy(key, &info.token, sizeof(info.token) < 16 ? sizeof(info.token) : 16);
#else
    H5O_info_t info;
    if (H5Oget_info2(object, &info, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS) < 0) { return -1; }
    key[0] = (uint64_t)info.addr;
#endif
    *fileno = info.fileno;
    *type = (int)info.type;
    *attributes = (unsigned long long)info.num_attrs;
    return 0;
}

/// Calls `visit(name, link type, context)` for each link of `group` in one pass (by name); a
/// non-zero return stops the walk and is returned. Link types: 0 hard, 1 soft, 64 external,
/// others user-defined. (H5Literate's callback type changed in 1.12; this hides which is used.)
typedef int (*shim_link_visit_t)(const char *name, int link_type, void *context);
typedef struct { shim_link_visit_t visit; void *context; } shim_link_visitor;
#if H5_VERSION_GE(1, 12, 0)
static herr_t shim_link_callback(hid_t group, const char *name, const H5L_info2_t *info, void *data) {
#else
static herr_t shim_link_callback(hid_t group, const char *name, const H5L_info_t *info, void *data) {
#endif
    (void)group;
    shim_link_visitor *visitor = (shim_link_visitor *)data;
    return visitor->visit(name, (int)info->type, visitor->context);
}
static inline herr_t shim_H5_iterate_links(hid_t group, shim_link_visit_t visit, void *context) {
    shim_link_visitor visitor = { visit, context };
    hsize_t index = 0;
#if H5_VERSION_GE(1, 12, 0)
    return H5Literate2(group, H5_INDEX_NAME, H5_ITER_INC, &index, shim_link_callback, &visitor);
#else
    return H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, shim_link_callback, &visitor);
#endif
}
