// SAMEverything: the pure parts of "segment everything" (upstream's SamAutomaticMaskGenerator and
// SAM2AutomaticMaskGenerator), with no model: what runs before the prompts go into the decoder and
// after the logits come out. Each file ports one concept and names its upstream function (// ref:).
//
//   upstream (segment_anything/utils/amg.py)   here
//   build_point_grid                           buildPointGrid(pointsPerSide:)            PointGrids.swift
//   build_all_layer_point_grids                buildAllLayerPointGrids(...)              PointGrids.swift
//   generate_crop_boxes                        generateCropBoxes(...)                    CropBoxes.swift
//   calculate_stability_score                  stabilityScore(...), stabilityScores(...) StabilityScore.swift
//   masks > mask_threshold                     BinaryMask(thresholding:...)              BinaryMask.swift
//   batched_mask_to_box                        maskToBox(_:), BinaryMask.boundingBox     MaskBoxes.swift
//   torchvision.ops.nms / batched_nms          nms(...), batchedNMS(...)                 BoxNMS.swift
//   mask_to_rle_pytorch, rle_to_mask,          UncompressedRLE(mask:), .mask(), .area    MaskRLE.swift
//     area_from_rle
//   coco_encode_rle (pycocotools rleToString)  COCORLE(_:), UncompressedRLE(_: COCORLE)  COCORLE.swift
//   remove_small_regions (cv2 components)      removeSmallRegions(_:areaThreshold:mode:) SmallRegions.swift
//   is_box_near_crop_edge, uncrop_boxes_xyxy,  isBoxNearCropEdge(...), PixelBox.uncropped(from:),
//     uncrop_points, uncrop_masks,               uncropPoint(_:from:), BinaryMask.uncropped(...),
//     box_xyxy_to_xywh                           PixelBox.xywh                          CropGeometry.swift
//   uncrop_masks + mask_to_rle_pytorch         UncompressedRLE(mask:uncroppedFrom:...)   MaskRLE.swift
//   1 / box_area(crop_boxes)                   PixelBox.reciprocalArea                   Boxes.swift
//
// SAM 2 (sam2/utils/amg.py, sam2 1.1.0) against SAM: every function above is the same code
// (converters/make_amg_fixtures.py runs both and checks they agree on every fixture), including
// mask_to_rle_pytorch and calculate_stability_score. The differences are elsewhere:
// - MaskData.to_numpy casts tensors with .float() first (bfloat16 support): MaskData is the
//   pipeline's bookkeeping, not ported here.
// - SAM2AutomaticMaskGenerator takes its own mask_threshold (default 0.0) and passes it to the
//   stability score and the thresholding; SAM's uses predictor.model.mask_threshold (0.0).
// - SAM 2 keeps the grid points in float32 (torch.as_tensor(points, dtype=float32)), SAM in
//   float64: uncropPoint is generic for that reason.
// - SAM 2 adds use_m2m (a second decoder pass fed the low-res masks) and multimask_output; its
//   NMS categories are zeros_like(boxes[:, 0]) (int64) where SAM's are torch.zeros(n) (float32):
//   both make batched_nms's offsets exactly 0.
//
// Semantics worth knowing (details in each function's documentation):
// - Stability: cut-offs summed in float64 then rounded to float32; strict >; int16 row sums that
//   wrap past 32,767; 0 / 0 = NaN for an empty low mask.
// - Mask boxes have inclusive maxima, crop boxes exclusive ones; a one-pixel mask's box has area
//   0, and two such boxes have IoU NaN, which never suppresses.
// - NMS suppresses when the float32 IoU is strictly greater than the float64 threshold; equal
//   scores keep ascending index order (torchvision's stable sort). Past 1,000 boxes torchvision's
//   batched_nms re-sorts with an unstable sort, so its order among equal scores is arbitrary there.
// - COCO strings: deltas against the count two before start at the fourth count (index > 2).
// - remove_small_regions: holes are 8-connected and include background touching the border; when
//   every island is small the largest is kept, ties going to cv2's first label (first 2×2 block);
//   "changed" is true whenever some region was small, even if the mask comes back the same.
