/*
 * The start-scoring kernel of @poise/usage (`scoreNodesToStartKernel` in
 * packages/usage/src/start-kernel.ts), written in C with the same incremental algorithm and the same
 * float operations in the same order, so that it makes the same decisions with the same score
 * bits. The benchmark (`bench/native.ts`) compiles it with `cc -O2 -ffp-contract=off` (or `$CC`) (no fused
 * multiply-add: the TypeScript kernel rounds every product) and compares its decisions and a
 * hash of every score it computed with the TypeScript kernel's.
 *
 * Input on stdin, whitespace-separated decimal numbers (shortest round-trip form, read exactly by
 * strtod):
 *   n                                   nodes, in byte order of their names
 *   cpu maxcpu mem maxmem               n lines: the nodes' base stats
 *   cpu maxcpu mem maxmem               the guest every decision places (static stats)
 *   decisions guests calls reps
 *
 * Output on stdout:
 *   decisions i0 i1 ...                 the node each of `decisions` placements chose (score every
 *                                       node, take the highest score, the first on ties; add the
 *                                       guest there), starting from the base stats
 *   score-hash h                        FNV-1a over the 64-bit patterns of every score of those
 *                                       decisions, in order (16 hex digits)
 *   score-us w1 w2 ...                  per repetition, wall-clock µs per score: the nodes carry
 *                                       `guests` guests placed round-robin, then `calls` scores
 *                                       are timed (one untimed repetition first, as a warm-up)
 *   score-cpu-us c1 c2 ...              the same repetitions' process CPU time, µs per score
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CRITERIA 4
/* |weight| / Σ|weight| of the criteria 1, 2, 5, 10, as `defineCriteria` computes them. */
#define SUM_OF_WEIGHTS (1.0 + 2.0 + 5.0 + 10.0)
static const double SAFE_COLUMN_SQUARES_PER_ROW = 0x1p-969;
static const double SAFE_DISTANCE_SQUARES = CRITERIA * 0x1p-900;
static const double MAX_STAT = 0x1p64;

struct cluster {
  int n;
  double *cpu, *maxcpu, *mem, *maxmem;
  /* scratch, reused by every call */
  double *cpu_square, *mem_square, *matrix;
};

static double weight[CRITERIA];

static void *alloc(size_t count) {
  void *p = calloc(count, sizeof(double));
  if (p == NULL) {
    fprintf(stderr, "start-score: out of memory\n");
    exit(1);
  }
  return p;
}

static int stat_ok(double v) { return v >= 0 && v <= MAX_STAT; }

/*
 * Math.max for the values here (loads: never NaN; a -0 load ends as the same criterion 1 + 0
 * after max(0, ·)). Not fmax, which gcc -O2 leaves as a library call.
 */
static inline double max2(double a, double b) { return a > b ? a : b; }

/* The largest value (its first position) and the next of a sequence. */
struct top2 {
  double first, second;
  int first_at;
};

static inline void top2_add(struct top2 *t, double v, int at) {
  if (v > t->first) {
    t->second = t->first;
    t->first = v;
    t->first_at = at;
  } else if (v > t->second) {
    t->second = v;
  }
}

/* The largest value at any position but `at`. */
static inline double top2_except(const struct top2 *t, int at) { return t->first_at != at ? t->first : t->second; }

/*
 * Row k of the TOPSIS matrix (1 + sqrt(sum / n), 1 + the highest load, per resource), folded into
 * the columns' sums of squares and extremes.
 */
static inline void add_row(struct cluster *c, int k, double cpu_squares, double mem_squares, const struct top2 *cpu_top, double cpu_load,
                           const struct top2 *mem_top, double mem_load, double squares[CRITERIA], double lo[CRITERIA], double hi[CRITERIA]) {
  const int n = c->n;
  double *x = c->matrix + (size_t)k * CRITERIA;
  x[0] = 1 + sqrt(cpu_squares / n);
  x[1] = 1 + max2(0, max2(top2_except(cpu_top, k), cpu_load));
  x[2] = 1 + sqrt(mem_squares / n);
  x[3] = 1 + max2(0, max2(top2_except(mem_top, k), mem_load));
  for (int j = 0; j < CRITERIA; j++) {
    squares[j] += x[j] * x[j];
    if (x[j] < lo[j]) lo[j] = x[j];
    if (x[j] > hi[j]) hi[j] = x[j];
  }
}

/*
 * Scores of a guest adding `add_cpu` cores (0: the node's own count) and `add_mem` bytes, into
 * out[0..n). Returns 0, or -1 when the guest's stats are out of range (as the TypeScript entry
 * point checks them). Not inlined, so that the timed loop cannot hoist any of it.
 */
__attribute__((noinline)) static int score_nodes_to_start(struct cluster *c, const double guest[4], double *out) {
  if (!stat_ok(guest[0]) || !stat_ok(guest[1]) || !stat_ok(guest[2]) || !stat_ok(guest[3])) return -1;
  const double add_cpu = guest[1], add_mem = guest[3];
  const int n = c->n;
  struct top2 cpu_top = {-INFINITY, -INFINITY, -1}, mem_top = {-INFINITY, -INFINITY, -1};
  for (int i = 0; i < n; i++) {
    const double l = c->cpu[i] / c->maxcpu[i];
    const double m = c->mem[i] / c->maxmem[i];
    c->cpu_square[i] = l * l;
    c->mem_square[i] = m * m;
    top2_add(&cpu_top, l, i);
    top2_add(&mem_top, m, i);
  }
  double cpu_prefix = 0, mem_prefix = 0; /* the squares of the nodes before k, folded from 0 */
  double squares[CRITERIA] = {0, 0, 0, 0};
  double lo[CRITERIA] = {INFINITY, INFINITY, INFINITY, INFINITY};
  double hi[CRITERIA] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  /*
   * Two rows a step, as the TypeScript kernel does: the sums of k and k + 1 fold the same squares
   * after k + 1, in four independent chains (each adds what it would alone, in the same order).
   */
  int k = 0;
  for (; k + 1 < n; k += 2) {
    const double cpu_load_a = (c->cpu[k] + (add_cpu == 0 ? c->maxcpu[k] : add_cpu)) / c->maxcpu[k];
    const double mem_load_a = (c->mem[k] + add_mem) / c->maxmem[k];
    const double cpu_load_b = (c->cpu[k + 1] + (add_cpu == 0 ? c->maxcpu[k + 1] : add_cpu)) / c->maxcpu[k + 1];
    const double mem_load_b = (c->mem[k + 1] + add_mem) / c->maxmem[k + 1];
    double cpu_squares_a = cpu_prefix + cpu_load_a * cpu_load_a + c->cpu_square[k + 1];
    double mem_squares_a = mem_prefix + mem_load_a * mem_load_a + c->mem_square[k + 1];
    cpu_prefix += c->cpu_square[k];
    mem_prefix += c->mem_square[k];
    double cpu_squares_b = cpu_prefix + cpu_load_b * cpu_load_b;
    double mem_squares_b = mem_prefix + mem_load_b * mem_load_b;
    cpu_prefix += c->cpu_square[k + 1];
    mem_prefix += c->mem_square[k + 1];
    for (int i = k + 2; i < n; i++) {
      cpu_squares_a += c->cpu_square[i];
      mem_squares_a += c->mem_square[i];
      cpu_squares_b += c->cpu_square[i];
      mem_squares_b += c->mem_square[i];
    }
    add_row(c, k, cpu_squares_a, mem_squares_a, &cpu_top, cpu_load_a, &mem_top, mem_load_a, squares, lo, hi);
    add_row(c, k + 1, cpu_squares_b, mem_squares_b, &cpu_top, cpu_load_b, &mem_top, mem_load_b, squares, lo, hi);
  }
  if (k < n) {
    /* the last node of an odd count: nothing after it */
    const double cpu_load = (c->cpu[k] + (add_cpu == 0 ? c->maxcpu[k] : add_cpu)) / c->maxcpu[k];
    const double mem_load = (c->mem[k] + add_mem) / c->maxmem[k];
    add_row(c, k, cpu_prefix + cpu_load * cpu_load, mem_prefix + mem_load * mem_load, &cpu_top, cpu_load, &mem_top, mem_load, squares, lo, hi);
  }
  double norm[CRITERIA], best[CRITERIA], worst[CRITERIA];
  for (int j = 0; j < CRITERIA; j++) {
    /* every criterion is 1 + a load: the column sums are far inside the plain fold's range */
    if (!(squares[j] >= n * SAFE_COLUMN_SQUARES_PER_ROW && squares[j] < INFINITY)) {
      fprintf(stderr, "start-score: column %d outside the plain fold's range\n", j);
      exit(1);
    }
    norm[j] = sqrt(squares[j]);
    best[j] = lo[j] / norm[j];
    worst[j] = hi[j] / norm[j];
  }
  for (int k = 0; k < n; k++) {
    const double *x = c->matrix + (size_t)k * CRITERIA;
    double to_best = 0, to_worst = 0;
    for (int j = 0; j < CRITERIA; j++) {
      const double v = x[j] / norm[j];
      const double b = weight[j] * (v - best[j]);
      const double w = weight[j] * (v - worst[j]);
      to_best += b * b;
      to_worst += w * w;
    }
    const double total = to_best + to_worst;
    if (!(total >= SAFE_DISTANCE_SQUARES) && total != 0) {
      fprintf(stderr, "start-score: row %d outside the plain fold's range\n", k);
      exit(1);
    }
    to_best = sqrt(to_best);
    to_worst = sqrt(to_worst);
    const double divisor = to_best + to_worst;
    out[k] = divisor == 0 ? 0 : to_worst / divisor;
  }
  return 0;
}

/* add_started_resource: cpu += maxcpu (the node's own count when 0), mem += maxmem */
static void add_started(struct cluster *c, int k, const double guest[4]) {
  c->cpu[k] += guest[1] == 0 ? c->maxcpu[k] : guest[1];
  c->mem[k] += guest[3];
}

static void reset(struct cluster *c, const double *base) {
  for (int i = 0; i < c->n; i++) {
    c->cpu[i] = base[4 * i];
    c->maxcpu[i] = base[4 * i + 1];
    c->mem[i] = base[4 * i + 2];
    c->maxmem[i] = base[4 * i + 3];
  }
}

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double read_number(const char *what) {
  double v;
  if (scanf("%lf", &v) != 1) {
    fprintf(stderr, "start-score: expected a number for %s on stdin\n", what);
    exit(2);
  }
  return v;
}

static long read_count(const char *what) {
  const double v = read_number(what);
  if (!(v >= 0 && v <= 1e9 && v == floor(v))) {
    fprintf(stderr, "start-score: %s must be an integer in [0, 1e9], got %g\n", what, v);
    exit(2);
  }
  return (long)v;
}

int main(void) {
  const double weights[CRITERIA] = {1, 2, 5, 10};
  for (int j = 0; j < CRITERIA; j++) weight[j] = weights[j] / SUM_OF_WEIGHTS;
  struct cluster c;
  c.n = (int)read_count("the node count");
  if (c.n < 1) {
    fprintf(stderr, "start-score: at least one node expected\n");
    return 2;
  }
  double *base = alloc((size_t)c.n * 4);
  for (int i = 0; i < 4 * c.n; i++) base[i] = read_number("a node stat");
  for (int i = 0; i < c.n; i++) {
    if (!stat_ok(base[4 * i]) || !(base[4 * i + 1] >= 1 && base[4 * i + 1] <= MAX_STAT) || !stat_ok(base[4 * i + 2]) ||
        !(base[4 * i + 3] >= 1 && base[4 * i + 3] <= MAX_STAT)) {
      fprintf(stderr, "start-score: node %d: stats out of range\n", i);
      return 2;
    }
  }
  double guest[4];
  for (int i = 0; i < 4; i++) guest[i] = read_number("a guest stat");
  const long decisions = read_count("decisions"), guests = read_count("guests"), calls = read_count("calls"), reps = read_count("reps");
  c.cpu = alloc(c.n), c.maxcpu = alloc(c.n), c.mem = alloc(c.n), c.maxmem = alloc(c.n);
  c.cpu_square = alloc(c.n), c.mem_square = alloc(c.n);
  c.matrix = alloc((size_t)c.n * CRITERIA);
  double *scores = alloc(c.n);

  /* the decisions, with every score hashed */
  reset(&c, base);
  uint64_t hash = 0xcbf29ce484222325u;
  printf("decisions");
  for (long d = 0; d < decisions; d++) {
    if (score_nodes_to_start(&c, guest, scores) != 0) {
      fprintf(stderr, "start-score: guest stats out of range\n");
      return 2;
    }
    int top = 0;
    for (int k = 0; k < c.n; k++) {
      uint64_t bits;
      memcpy(&bits, &scores[k], sizeof bits);
      for (int byte = 0; byte < 8; byte++) hash = (hash ^ ((bits >> (8 * byte)) & 0xff)) * 0x100000001b3u;
      if (scores[k] > scores[top]) top = k;
    }
    add_started(&c, top, guest);
    printf(" %d", top);
  }
  printf("\nscore-hash %016llx\n", (unsigned long long)hash);

  /* timed batches of `calls` scores: one warm-up, then `reps` */
  double *wall = alloc(reps > 0 ? reps : 1), *cpu = alloc(reps > 0 ? reps : 1);
  double sink = 0;
  for (long rep = -1; rep < reps; rep++) {
    reset(&c, base);
    for (long g = 0; g < guests; g++) add_started(&c, (int)(g % c.n), guest);
    const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (long call = 0; call < calls; call++) {
      score_nodes_to_start(&c, guest, scores);
      sink += scores[0];
    }
    const double w1 = seconds(CLOCK_MONOTONIC), c1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (rep >= 0 && calls > 0) {
      wall[rep] = (w1 - w0) * 1e6 / calls;
      cpu[rep] = (c1 - c0) * 1e6 / calls;
    }
  }
  printf("score-us");
  for (long rep = 0; rep < reps; rep++) printf(" %.6g", wall[rep]);
  printf("\nscore-cpu-us");
  for (long rep = 0; rep < reps; rep++) printf(" %.6g", cpu[rep]);
  printf("\n");
  /* the sink keeps the timed calls observable */
  if (sink < 0) printf("sink %g\n", sink);
  return 0;
}
