/* kpathsea's file database, filled in linear time: a library TeX loads in the sandbox.

   Every TeX process reads ls-R (183,000 names in TeX Live 2026) into kpathsea's hash table
   as it starts. kpathsea's hash_insert reduces the bucket index modulo the table's size at
   every character, a division each, and walks the bucket's whole chain to append: 2.2 million
   divisions and 340,000 pointer steps, a third of a bare kpsewhich and about 30 ms of every
   TeX process's CPU on the machines here (docs/performance.md).

   This library defines hash_insert and hash_insert_normalized with the same bucket (the same
   formula, reduced by subtraction) and the same order (appended at the bucket's tail, which it
   remembers per bucket), so the table is the one kpathsea builds, node for node, and every
   lookup answers as before. The service checks that before it uses the library
   (src/tex/kpse-hash.ts) and loads it with LD_PRELOAD: libkpathsea calls these functions
   through its PLT. An executable's own functions of these names (bash has a hash_insert)
   still win, since the executable comes first in the lookup order. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Tables this large are ls-R's (64,007 buckets; 32,003 before TeX Live 2024); the small
   ones (texmf.cnf's, the aliases) keep kpathsea's walk. */
#define TRACKED_SIZE 16384

/* The last element of each bucket of the one table tracked, or NULL when unknown. */
static hash_element_type **tails;
static hash_element_type **tracked;

static void untrack(hash_element_type **buckets) {
  if (buckets == tracked) tracked = NULL;
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

static void *real(const char *name) {
  void *fn = dlsym(RTLD_NEXT, name);
  if (fn == NULL) {
    fprintf(stderr, "kpse-hash: no %s in kpathsea\n", name);
    exit(1);
  }
  return fn;
}

hash_table_type hash_create(unsigned size) {
  static hash_table_type (*create)(unsigned);
  if (create == NULL) create = (hash_table_type (*)(unsigned))real("hash_create");
  hash_table_type table = create(size);
  /* Buckets of a freed table handed out again: what was remembered of them is stale. */
  untrack(table.buckets);
  return table;
}

void hash_free(hash_table_type table) {
  static void (*release)(hash_table_type);
  if (release == NULL) release = (void (*)(hash_table_type))real("hash_free");
  untrack(table.buckets);
  release(table);
}

void hash_remove(hash_table_type *table, const char *key, const char *value) {
  static void (*remove)(hash_table_type *, const char *, const char *);
  if (remove == NULL) remove = (void (*)(hash_table_type *, const char *, const char *))real("hash_remove");
  untrack(table->buckets);
  remove(table, key, value);
}

void hash_insert(hash_table_type *table, const char *key, const char *value) {
  unsigned n = bucket_of(table->size, key);
  hash_element_type *element = malloc(sizeof *element);
  if (element == NULL) {
    fputs("fatal: memory exhausted.\n", stderr);
    exit(EXIT_FAILURE);
  }
  element->key = key;
  element->value = value;
  element->next = NULL;

  if (table->size >= TRACKED_SIZE && table->buckets != tracked) {
    free(tails);
    tails = calloc(table->size, sizeof *tails);
    tracked = tails != NULL ? table->buckets : NULL;
  }
  int known = table->buckets == tracked;
  hash_element_type *last = known ? tails[n] : NULL;
  if (table->buckets[n] == NULL) {
    table->buckets[n] = element;
  } else {
    /* From the remembered tail (whose next stays NULL unless an insert bypassed this
       library), else from the head of a bucket filled before it was tracked. */
    if (last == NULL) last = table->buckets[n];
    while (last->next != NULL) last = last->next;
    last->next = element;
  }
  if (known) tails[n] = element;
}

void hash_insert_normalized(hash_table_type *table, const char *key, const char *value) {
  hash_insert(table, key, value);
}
