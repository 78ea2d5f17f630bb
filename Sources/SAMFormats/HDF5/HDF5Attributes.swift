import CHDF5

/// Attributes of an HDF5 object, rendered as text: strings as they are, numbers as a list.
enum HDF5Attributes {
    /// The first `limit` attributes by name (an object may carry millions; the rest are not read).
    static func read(of object: hid_t, limit: Int) -> [String: String] {
        final class Names {
            var values: [String] = []
            let limit: Int
            init(limit: Int) { self.limit = limit }
        }
        let names = Names(limit: limit)
        var index: hsize_t = 0
        let status = withExtendedLifetime(names) {
            H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, { _, name, _, context in
                guard let name, let context else { return 0 }
                let names = Unmanaged<Names>.fromOpaque(context).takeUnretainedValue()
                names.values.append(String(cString: name))
                return names.values.count >= names.limit ? 1 : 0  // positive: stop, not an error
            }, Unmanaged.passUnretained(names).toOpaque())
        }
        guard status >= 0 else { return [:] }
        var result: [String: String] = [:]
        for name in names.values {
            let attribute = H5Aopen(object, name, shim_H5P_DEFAULT())
            guard attribute >= 0 else { continue }
            defer { H5Aclose(attribute) }
            result[name] = text(of: attribute)
        }
        return result
    }

    private static func text(of attribute: hid_t) -> String {
        let type = H5Aget_type(attribute)
        defer { H5Tclose(type) }
        let space = H5Aget_space(attribute)
        defer { H5Sclose(space) }
        let count = max(Int(H5Sget_simple_extent_npoints(space)), 0)
        guard count <= 4096 else { return "<\(count) elements>" }
        switch H5Tget_class(type) {
        case H5T_STRING:
            if H5Tis_variable_str(type) > 0 {
                guard count == 1 else { return "<\(count) strings>" }
                var pointer: UnsafeMutablePointer<CChar>? = nil
                let memoryType = H5Tcopy(type)
                defer { H5Tclose(memoryType) }
                guard H5Aread(attribute, memoryType, &pointer) >= 0, let pointer else { return "<unreadable>" }
                defer { free(pointer) }
                return String(cString: pointer)
            }
            let size = H5Tget_size(type)
            var buffer = [UInt8](repeating: 0, count: size * max(count, 1) + 1)
            guard H5Aread(attribute, type, &buffer) >= 0 else { return "<unreadable>" }
            return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        case H5T_FLOAT, H5T_INTEGER:
            var values = [Double](repeating: 0, count: max(count, 1))
            guard H5Aread(attribute, shim_H5T_NATIVE_DOUBLE(), &values) >= 0 else { return "<unreadable>" }
            let rendered = values.prefix(count).map { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : String($0) }
            return count == 1 ? rendered[0] : "[" + rendered.joined(separator: ", ") + "]"
        default:
            return "<unsupported attribute type>"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
