/// Everything the pickle machine builds, in flat tables that `PickleValue`s index.
struct PickleHeap: Sendable {
    var tuples: [[PickleValue]] = []
    var lists: [[PickleValue]] = []
    var dicts: [PickleDict] = []
    var storages: [TorchStorageReference] = []
    var tensors: [PickleTensor] = []

    var objectCount: Int { tuples.count + lists.count + dicts.count + storages.count + tensors.count }
}

/// A tensor as `_rebuild_tensor_v2` describes it, not yet checked against its storage.
struct PickleTensor: Sendable {
    /// Index into `PickleHeap.storages`.
    let storage: Int
    let storageOffset: Int
    let shape: [Int]
    let strides: [Int]
}
