/* kpathsea's file database, built in linear time: a library TeX loads in the sandbox.

   Every TeX process reads ls-R (189,000 names in TeX Live 2026) into kpathsea's hash table
   as it starts, before it reads a line of the document. kpathsea's hash_insert reduces the
   bucket index modulo the table's size at every character (a division each) and walks the
   bucket's chain to append (340,000 steps, most of them cache misses): 55 of a bare
   kpsewhich's 108 ms of CPU on the machines here (docs/performance.md).

   This library defines hash_insert to build the very same table another way. While the
   database is read (from the table's creation to its first lookup) it only notes each name,
   folder and bucket, in order; the bucket is kpathsea's formula, reduced by subtraction. At
   the first lookup it lays the elements out bucket by bucket, in the order kpathsea would have
   chained them, and links each bucket's run: every lookup then answers as before, node for
   node. The service checks that on each TeX Live before it uses the library
   (src/tex/sandbox/kpse-hash.ts), and loads it with LD_PRELOAD: libkpathsea calls these functions
   through its PLT. An executable's own functions of these names (bash has a hash_insert)
   still win, since the executable comes first in the lookup order.

   The elements live in one block, so no element of that table may be passed to free():
   hash_remove unlinks without freeing, and hash_free leaves the table alone (TeX Live's
   programs call neither). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kpathsea's hash.h, unchanged since 1994. */
typedef struct hash_element_struct {
  const char *key;
  const char *value;
  struct hash_element_struct *next;
} hash_element_type;

typedef struct {
  hash_element_type **buckets;
  unsigned size;
} hash_table_type;

/* Tables this large are ls-R's (64,007 buckets; 32,003 before TeX Live 2024). The small ones
   (texmf.cnf's, the aliases) are built as kpathsea builds them. */
#define DEFERRED_SIZE 16384

typedef struct {
  const char *key;
  const char *value;
  unsigned bucket;
} noted_type;

/* The table being read (its elements only noted), or NULL. Only the first large table is. */
static hash_element_type **deferred;
static unsigned deferred_size;
static noted_type *noted;
static size_t noted_count, noted_capacity;
/* The table whose elements are in `block`, once laid out. */
static hash_element_type **laid_out;
static hash_element_type *block, *block_end;
static int large_seen;

static void *real(const char *name) {
  void *fn = dlsym(RTLD_NEXT, name);
  if (fn == NULL) {
    fprintf(stderr, "kpse-hash: no %s in kpathsea\n", name);
    exit(EXIT_FAILURE);
  }
  return fn;
}

static void *allocated(void *memory) {
  if (memory == NULL) {
    fputs("fatal: memory exhausted.\n", stderr);
    exit(EXIT_FAILURE);
  }
  return memory;
}

/* kpathsea's hash(): n = (n + n + c) % size for each character c, a char as kpathsea's is.
   n < size, so n + n + c < 3 * size unless c is negative and wraps: only then divide. */
static unsigned bucket_of(unsigned size, const char *key) {
  unsigned long long limit = size;
  unsigned n = 0;
  while (*key != 0) {
    unsigned v = n + n + *key++;
    if (v < limit) n = v;
    else if (v < 2 * limit) n = v - size;
    else if (v < 3 * limit) n = v - 2 * size;
    else n = v % size;
  }
  return n;
}

/* kpathsea's own insert: at the end of the bucket's chain. */
static void append(hash_element_type **buckets, unsigned n, const char *key, const char *value) {
  hash_element_type *element = allocated(malloc(sizeof *element));
  element->key = key;
  element->value = value;
  element->next = NULL;
  hash_element_type *last = buckets[n];
  if (last == NULL) {
    buckets[n] = element;
    return;
  }
  while (last->next != NULL) last = last->next;
  last->next = element;
}

/* Links what was noted: a counting sort by bucket keeps each bucket's names in the order they
   came, which is the order of kpathsea's chains. The buckets were empty: the table was new. */
static void lay_out(void) {
  if (deferred == NULL) return;
  hash_element_type **buckets = deferred;
  unsigned size = deferred_size;
  deferred = NULL;
  unsigned *end = calloc((size_t)size + 1, sizeof *end);
  hash_element_type *elements = noted_count > 0 ? malloc(noted_count * sizeof *elements) : NULL;
  if (end == NULL || elements == NULL) {
    for (size_t i = 0; i < noted_count; i++) append(buckets, noted[i].bucket, noted[i].key, noted[i].value);
  } else {
    for (size_t i = 0; i < noted_count; i++) end[noted[i].bucket + 1]++;
    for (unsigned b = 0; b < size; b++) end[b + 1] += end[b];
    /* end[b] is where bucket b starts; after this loop, where it ends. */
    for (size_t i = 0; i < noted_count; i++) {
      hash_element_type *element = &elements[end[noted[i].bucket]++];
      element->key = noted[i].key;
      element->value = noted[i].value;
    }
    unsigned from = 0;
    for (unsigned b = 0; b < size; b++) {
      unsigned to = end[b];
      if (to > from) {
        for (unsigned i = from; i + 1 < to; i++) elements[i].next = &elements[i + 1];
        elements[to - 1].next = NULL;
        buckets[b] = &elements[from];
      }
      from = to;
    }
    laid_out = buckets;
    block = elements;
    block_end = elements + noted_count;
    elements = NULL;
  }
  free(end);
  free(elements);
  free(noted);
  noted = NULL;
  noted_count = noted_capacity = 0;
}

hash_table_type hash_create(unsigned size) {
  static hash_table_type (*create)(unsigned);
  if (create == NULL) create = (hash_table_type (*)(unsigned))real("hash_create");
  lay_out();
  hash_table_type table = create(size);
  if (size >= DEFERRED_SIZE && !large_seen) {
    large_seen = 1;
    deferred = table.buckets;
    deferred_size = size;
  }
  return table;
}

void hash_insert(hash_table_type *table, const char *key, const char *value) {
  unsigned n = bucket_of(table->size, key);
  if (table->buckets == deferred) {
    if (noted_count == noted_capacity) {
      size_t more = noted_capacity > 0 ? noted_capacity * 2 : 262144;
      noted_type *grown = realloc(noted, more * sizeof *grown);
      if (grown == NULL) {
        lay_out();
        append(table->buckets, n, key, value);
        return;
      }
      noted = grown;
      noted_capacity = more;
    }
    noted[noted_count].key = key;
    noted[noted_count].value = value;
    noted[noted_count].bucket = n;
    noted_count++;
    return;
  }
  append(table->buckets, n, key, value);
}

void hash_insert_normalized(hash_table_type *table, const char *key, const char *value) {
  hash_insert(table, key, value);
}

char **hash_lookup(hash_table_type table, const char *key) {
  static char **(*lookup)(hash_table_type, const char *);
  if (lookup == NULL) lookup = (char **(*)(hash_table_type, const char *))real("hash_lookup");
  if (table.buckets == deferred) lay_out();
  return lookup(table, key);
}

void hash_print(hash_table_type table, int summary_only) {
  static void (*print)(hash_table_type, int);
  if (print == NULL) print = (void (*)(hash_table_type, int))real("hash_print");
  if (table.buckets == deferred) lay_out();
  print(table, summary_only);
}

void hash_remove(hash_table_type *table, const char *key, const char *value) {
  static void (*kpathsea_remove)(hash_table_type *, const char *, const char *);
  if (kpathsea_remove == NULL) kpathsea_remove = (void (*)(hash_table_type *, const char *, const char *))real("hash_remove");
  if (table->buckets == deferred) lay_out();
  if (table->buckets != laid_out) {
    kpathsea_remove(table, key, value);
    return;
  }
  /* kpathsea's remove, but an element of the block is unlinked, not freed. */
  unsigned n = bucket_of(table->size, key);
  hash_element_type *p, *q;
  for (q = NULL, p = table->buckets[n]; p != NULL; q = p, p = p->next)
    if (strcmp(key, p->key) == 0 && strcmp(value, p->value) == 0) break;
  if (p == NULL) return;
  if (q != NULL) q->next = p->next;
  else table->buckets[n] = p->next;
  if (p < block || p >= block_end) free(p);
}

void hash_free(hash_table_type table) {
  static void (*release)(hash_table_type);
  if (release == NULL) release = (void (*)(hash_table_type))real("hash_free");
  if (table.buckets == deferred) lay_out();
  if (table.buckets == laid_out) return;
  release(table);
}
