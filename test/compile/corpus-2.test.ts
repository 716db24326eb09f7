// The real-project corpus of issue #22, second half (real-projects.ts says how).
import { realProjects } from './real-projects.js';

realProjects(1);
