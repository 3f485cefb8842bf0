;; String skipping for the allow-list scanner (src/scan/machine.ts), WebAssembly + SIMD.
;;
;; Source of truth for the bytes embedded in skip-wasm.ts. After editing, regenerate with
;;   npx tsx bench/lib/build-scan-wasm.ts
;; (test/scan/wasm.test.ts fails while the two disagree).
;;
;; Why: most bytes of a messages document are inside strings, and code-like content has an
;; (escaped) quote every ~25 bytes. Buffer#indexOf costs a native call per quote; this walks
;; 64 bytes per step, computes quote and backslash masks with SIMD and resolves escapes
;; branch-free with simdjson's escape-scanner arithmetic, in one call per string.
;;
;; The caller guarantees 64 readable bytes past `end` (loads are masked, never trusted).
(module
  (import "env" "mem" (memory 1))

  ;; 1 when the byte at $k is escaped: preceded by an odd run of backslashes. The run stops at
  ;; $start, where $carry (the same answer for the byte at $start) continues it.
  (func $escapedAt (param $k i32) (param $start i32) (param $carry i32) (result i64)
    (local $j i32)
    (local.set $j (local.get $k))
    (block $runend
      (loop $run
        (br_if $runend (i32.le_u (local.get $j) (local.get $start)))
        (br_if $runend (i32.ne (i32.load8_u (i32.sub (local.get $j) (i32.const 1))) (i32.const 0x5c)))
        (local.set $j (i32.sub (local.get $j) (i32.const 1)))
        (br $run)))
    (i64.extend_i32_u
      (i32.and
        (i32.add (i32.sub (local.get $k) (local.get $j))
                 (i32.and (local.get $carry) (i32.eq (local.get $j) (local.get $start))))
        (i32.const 1))))

  ;; skip(p, end, carry): address of the first unescaped '"' in [p, end); if there is none,
  ;; -1 - carry' where carry' says whether the byte at `end` is escaped. `carry` is the same
  ;; for the byte at `p` (the string's earlier part ended in an odd backslash run).
  (func (export "skip") (param $p i32) (param $end i32) (param $carry i32) (result i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $vq v128) (local $vb v128)
    (local $q i64) (local $b i64) (local $c i64) (local $pe i64) (local $t i64) (local $mask i64)
    (local $n i32) (local $start i32)
    (local.set $start (local.get $p))
    (local.set $vq (i8x16.splat (i32.const 0x22)))
    (local.set $vb (i8x16.splat (i32.const 0x5c)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v0 (v128.load offset=0 align=1 (local.get $p)))
        (local.set $v1 (v128.load offset=16 align=1 (local.get $p)))
        (local.set $v2 (v128.load offset=32 align=1 (local.get $p)))
        (local.set $v3 (v128.load offset=48 align=1 (local.get $p)))
        ;; quote mask of the 64-byte block, bit i = byte p+i
        (local.set $q (i64.or
          (i64.or (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (local.get $vq))))
                  (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (local.get $vq)))) (i64.const 16)))
          (i64.or (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (local.get $vq)))) (i64.const 32))
                  (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (local.get $vq)))) (i64.const 48)))))
        (local.set $n (i32.sub (local.get $end) (local.get $p)))
        (local.set $mask (i64.const -1))
        (if (i32.lt_u (local.get $n) (i32.const 64))
          (then
            (local.set $mask (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $n))) (i64.const 1)))
            (local.set $q (i64.and (local.get $q) (local.get $mask)))))
        ;; Blocks without a quote need nothing else: the backslash state is recovered lazily
        ;; by $escapedAt when a later block (or the end) needs it.
        (if (i64.ne (local.get $q) (i64.const 0))
          (then
            (local.set $b (i64.and (local.get $mask) (i64.or
              (i64.or (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (local.get $vb))))
                      (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (local.get $vb)))) (i64.const 16)))
              (i64.or (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (local.get $vb)))) (i64.const 32))
                      (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (local.get $vb)))) (i64.const 48))))))
            ;; carry-in for this block; the call is needed only when a backslash precedes it
            (local.set $c
              (if (result i64) (i32.le_u (local.get $p) (local.get $start))
                (then (i64.extend_i32_u (local.get $carry)))
                (else
                  (if (result i64) (i32.eq (i32.load8_u (i32.sub (local.get $p) (i32.const 1))) (i32.const 0x5c))
                    (then (call $escapedAt (local.get $p) (local.get $start) (local.get $carry)))
                    (else (i64.const 0))))))
            ;; simdjson escape scanner: $t marks each escaping backslash and the byte it escapes;
            ;; escaped = $t ^ (backslashes | carry-in).
            (local.set $pe (i64.and (local.get $b) (i64.xor (local.get $c) (i64.const -1))))
            (local.set $t (i64.xor
              (i64.sub (i64.or (i64.shl (local.get $pe) (i64.const 1)) (i64.const 0xAAAAAAAAAAAAAAAA)) (local.get $pe))
              (i64.const 0xAAAAAAAAAAAAAAAA)))
            (local.set $q (i64.and (local.get $q)
              (i64.xor (i64.xor (local.get $t) (i64.or (local.get $b) (local.get $c))) (i64.const -1))))
            (if (i64.ne (local.get $q) (i64.const 0))
              (then (return (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $q)))))))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $next)))
    (i32.sub (i32.const -1) (i32.wrap_i64 (call $escapedAt (local.get $end) (local.get $start) (local.get $carry)))))
)
